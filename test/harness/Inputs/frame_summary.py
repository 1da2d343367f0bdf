"""frame_summary.py REPORT.jsonl: one line per event: its site and, per
native frame, what symbolization left (file:line, function, module+offset)."""
import json
import sys

for line in open(sys.argv[1]):
    event = json.loads(line)
    site = event.get("site")
    print("event %s site %s" % (event.get("seq"), "%s:%s %s" % (site["file"], site["line"], site["lang"]) if site else "none"))
    for frame in event.get("stack", []):
        print("  frame file=%s line=%s function=%s module=%s offset=%s" % (
            frame.get("file"), frame.get("line"), frame.get("function"),
            frame.get("module"), frame.get("offset")))
