# Prints what autocoder needs to know about this interpreter, as one JSON object.
import json
import os
import sys

print(json.dumps({
    "executable": os.path.realpath(sys.executable),
    "version": "%d.%d.%d" % sys.version_info[:3],
    "prefix": os.path.realpath(sys.prefix),
    "base_prefix": os.path.realpath(sys.base_prefix),
}))
