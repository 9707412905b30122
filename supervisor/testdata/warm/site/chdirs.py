# Changes the working folder at import.
import os

os.chdir(os.path.dirname(os.path.abspath(__file__)))
