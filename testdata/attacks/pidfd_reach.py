# attack: open pidfds on the tree's init and on itself, and signal through them: a pidfd names a process outside the pid checks of Landlock's scopes
# sandbox: yes
# expect: exit=0 status=passed metadata.pidfd_open_init=EPERM metadata.pidfd_open_self=EPERM metadata.pidfd_send_signal=EPERM
"""Refused, the strategy carries on and the job passes."""
import os

from helpers.kernel import attack_line, call, raw

outcome = {}


def on_data(ctx, history):
    if outcome:
        return
    attack_line()
    outcome["pidfd_open_init"] = call("pidfd_open", 1, 0)
    fd, outcome["pidfd_open_self"] = raw("pidfd_open", os.getpid(), 0)
    outcome["pidfd_send_signal"] = call("pidfd_send_signal", fd if fd >= 0 else 1, 0, 0, 0)
    print(outcome)


def on_finish(ctx):
    return outcome
