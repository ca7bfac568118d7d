# Reads the Python source file named by argv[1]; prints the top-level modules it imports (absolute imports only)
# and this interpreter's standard-library module names, as one JSON object.
import ast
import json
import sys

with open(sys.argv[1], encoding="utf-8") as f:
    source = f.read()
found = set()
error = None
try:
    tree = ast.parse(source)
except SyntaxError as e:
    tree = None
    error = "line %s: %s" % (e.lineno, e.msg)
if tree is not None:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.add(alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
print(json.dumps({
    "imports": sorted(found),
    "stdlib": sorted(sys.stdlib_module_names),
    "syntax_error": error,
}))
