# Writes a file in the working folder at import (a worker's is its
# strategy's folder).
open("made_at_import.txt", "w").close()
