"""expect_exit.py CODE COMMAND...: runs COMMAND, prints its stderr then its
stdout, and fails unless it exited with CODE (lit's `not` accepts any
non-zero status; the harness tools promise 2 for bad input)."""
import subprocess
import sys

code = int(sys.argv[1])
done = subprocess.run(sys.argv[2:], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                      text=True)
sys.stdout.write(done.stderr)
sys.stdout.write(done.stdout)
if done.returncode != code:
    print("expect_exit: exit status %d, expected %d" % (done.returncode, code))
    sys.exit(1)
print("expect_exit: status %d" % code)
