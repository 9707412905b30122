"""The strategy's configuration, which the third-party thirdlib uses."""
LOT = 7
