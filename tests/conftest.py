import os
import sys

# Let tests import the example scripts.
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))
