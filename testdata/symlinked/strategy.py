# attack: none: a strategy reached through a symbolic link, importing a module that sits beside its real file
# sandbox: both
# expect: exit=0 status=passed
import helper


def on_data(ctx, history):
    if len(history) == 3:
        print("helper says", helper.double(21))
