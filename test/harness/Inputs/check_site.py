"""check_site.py REPORT.jsonl: for events that carry expect_file and
expect_line, says whether a symbolized frame names that file and line."""
import json
import sys

for line in open(sys.argv[1]):
    event = json.loads(line)
    if "expect_line" not in event:
        continue
    hits = [f for f in event.get("stack", [])
            if (f.get("file") or "").endswith(event["expect_file"])
            and f.get("line") == event["expect_line"]]
    print("frame at expected line: %s" % ("yes" if hits else "no"))
    print("site: %s" % ("set" if event.get("site") else "none"))
