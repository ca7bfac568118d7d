# Runs a parsed command inside the sandbox: steps of pipelines joined like bash's `&&`, `||` and
# `;`, each program started from its argv (never through a shell), with its redirections.
# Written by autocoder-sandbox; reads the steps (JSON) from the file named by argv[1].
import json
import os
import subprocess
import sys


def destination(stream, channel, files):
    if stream == "stdout":
        return channel
    if stream == "stderr":
        return sys.stderr.fileno()
    spec = stream["file"]
    path = spec["path"]
    if path not in files:
        flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if spec["append"] else os.O_TRUNC)
        files[path] = os.open(path, flags, 0o644)
    return files[path]


def run_pipeline(commands):
    sys.stdout.flush()
    sys.stderr.flush()
    started = []
    previous = None
    for index, command in enumerate(commands):
        last = index == len(commands) - 1
        files = {}
        to_close = []
        try:
            if command["stdin"] is not None:
                stdin = os.open(command["stdin"], os.O_RDONLY)
                to_close.append(stdin)
            elif previous is not None:
                stdin = previous
            else:
                stdin = subprocess.DEVNULL
            if previous is not None:
                to_close.append(previous)
            previous = None
            if last:
                channel = sys.stdout.fileno()
            else:
                previous, channel = os.pipe()
                to_close.append(channel)
            stdout = destination(command["stdout"], channel, files)
            stderr = destination(command["stderr"], channel, files)
            argv = command["argv"]
            try:
                started.append(subprocess.Popen(argv, stdin=stdin, stdout=stdout, stderr=stderr))
            except FileNotFoundError:
                print(f"{argv[0]}: command not found", file=sys.stderr, flush=True)
                started.append(127)
            except PermissionError:
                print(f"{argv[0]}: permission denied", file=sys.stderr, flush=True)
                started.append(126)
        except OSError as error:
            print(f"{error.filename or ''}: {error.strerror}", file=sys.stderr, flush=True)
            started.append(1)
        finally:
            for fd in to_close + list(files.values()):
                try:
                    os.close(fd)
                except OSError:
                    pass
    if previous is not None:
        os.close(previous)
    status = 0
    for process in started:
        if isinstance(process, int):
            status = process
            continue
        code = process.wait()
        status = 128 - code if code < 0 else code
    return status


def main():
    with open(sys.argv[1], encoding="utf-8") as handle:
        steps = json.load(handle)
    status = 0
    for step in steps:
        when = step["when"]
        if (when == "succeeded" and status != 0) or (when == "failed" and status == 0):
            continue
        status = run_pipeline(step["pipeline"])
    sys.stdout.flush()
    sys.exit(min(status, 255))


main()
