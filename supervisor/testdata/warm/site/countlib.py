# A third-party module for the warm tests (on PYTHONPATH): its state is
# the template's at the fork, and whatever a run does to it stays there.
import os

count = 0
token = os.urandom(8).hex()  # one per import: the same in every run of one template
