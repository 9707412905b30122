# The guarded strategy's configuration, which the third-party usesfolder
# imports when it can.
LOT = 7
