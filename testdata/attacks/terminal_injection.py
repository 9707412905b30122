# attack: escape sequences in the MANIFEST, printed lines and an exception message, aimed at the terminal of whoever reads the text outputs
# sandbox: no
# expect: exit=1 status=failed failure.kind=exception failure.hook=on_data
# text: clean
import sys
import time

ESC = "\x1b"
MANIFEST = {
    "name": ESC + "]0;pwned" + "\x07" + ESC + "[2J" + "name",
    "params": {"p" + ESC + "[31m": ESC + "[5mblink"},
}


def on_data(ctx, history):
    print("ATTACK %.6f" % time.time())
    print(ESC + "[2J" + ESC + "[H" + "cleared your screen" + "\r\x08\x07")
    sys.stderr.write(ESC + "]52;c;cHduZWQ=" + "\x07" + "\x9b31m" + "\n")
    raise ValueError(ESC + "[1;31mred" + ESC + "]8;;http://evil/" + ESC + "\\link\x00nul")
