import os
import sys
import tempfile

# Let tests import the example scripts.
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))

# Tests never read or write the user's measured profile: pipelines built in
# tests (and in the commands they start) use the reference costs, from an
# empty profile that keeps the CLI from measuring one.
os.environ["SLUICE_PROFILE"] = os.path.join(tempfile.mkdtemp(prefix="sluice-test-"), "profile.json")
with open(os.environ["SLUICE_PROFILE"], "w") as empty:
    empty.write('{"nfs": {}}')
