#!/usr/bin/env python3
"""The Python peer of `cargo bench --bench scale` (issue 23): a minimal hook for a subagent's
DONE, the shape the issue measured against. It reads the hook payload on stdin and the same
files taskhook reads for that layout, marks one task done (a temp file in the same folder,
fsync, os.replace, the folder fsynced; cdd: the task file renamed into completed/, since
there the folder is the status), and appends one log line where the layout keeps a log. It
does strictly less than taskhook: no schema check, no parents, phases, velocity, readiness,
merge queue or notices.

    scale_peer.py done LAYOUT STORE_DIR TASK_ID < payload
    scale_peer.py check LAYOUT STORE_DIR TASK_ID...   (exit 1 unless each task moved on)
"""
import fcntl
import json
import os
import sys
import time
import uuid


def now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def read_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def read_text(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def fsync_dir(folder):
    fd = os.open(folder, os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)


def replace_json(path, doc, temp_dir=None):
    folder = temp_dir or os.path.dirname(path)
    tmp = os.path.join(folder, ".write-%s" % uuid.uuid4())
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2, ensure_ascii=False)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fsync_dir(os.path.dirname(path))


def append(path, text):
    with open(path, "a", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())


def lock(folder, name):
    f = open(os.path.join(folder, name), "a")
    fcntl.flock(f, fcntl.LOCK_EX)
    return f


def projects(root, tid):
    held = lock(root, ".taskhook.lock")
    read_json(os.path.join(root, "project.json"))
    doc = read_json(os.path.join(root, "tasks.json"))
    read_text(os.path.join(root, "progress", "log.md"))
    read_json(os.path.join(root, "progress", "velocity.json"))
    task = next(t for t in doc["tasks"] if t["id"] == tid)
    before = task["status"]
    task["status"] = "COMPLETE"
    task["completed_at"] = now()
    replace_json(os.path.join(root, "tasks.json"), doc, os.path.join(root, "temp"))
    append(os.path.join(root, "progress", "log.md"),
           "## %s — TASK_COMPLETE\n- Task: %s\n- Previous status: %s\n- New status: COMPLETE\n\n"
           % (now(), tid, before))
    held.close()


def execute(root, tid):
    held = lock(root, ".execute-state.json.lock")
    path = os.path.join(root, "execute-state.json")
    doc = read_json(path)
    doc["tasks"][tid]["status"] = "verifying"
    doc["updated_at"] = now()
    replace_json(path, doc)
    held.close()


def cdd(root, tid):
    held = lock(root, ".taskhook.lock")
    read_json(os.path.join(root, "order.json"))
    where = None
    for folder in ("pending", "in_progress", "completed", "failed"):
        if tid in os.listdir(os.path.join(root, folder)):
            where = folder
    history = os.path.join(root, "history.jsonl")
    for line in read_text(history).splitlines():
        json.loads(line)
    os.replace(os.path.join(root, where, tid), os.path.join(root, "completed", tid))
    fsync_dir(os.path.join(root, "completed"))
    fsync_dir(os.path.join(root, where))
    append(history, json.dumps({"timestamp": now(), "action": "done", "task": tid,
                                "from": where, "to": "completed"}) + "\n")
    held.close()


def iterative(root, tid):
    held = lock(root, ".taskhook.lock")
    path = os.path.join(root, "state.json")
    doc = read_json(path)
    read_text(os.path.join(root, "tasks.md"))
    read_text(os.path.join(root, "progress.md"))
    unit = doc["tasks"][tid]
    unit["iterations_used"] = unit.get("iterations_used", 0) + 1
    unit["status"] = "done"
    doc["updated"] = now()
    replace_json(path, doc)
    append(os.path.join(root, "progress.md"),
           "## %s - Iteration %d - %s\n**Did:** finished\n**Signal:** %s_DONE\n\n"
           % (tid, unit["iterations_used"], now(), tid))
    held.close()


def claude_tasks(root, tid):
    held = lock(root, ".tasks.json.lock")
    path = os.path.join(root, "tasks.json")
    doc = read_json(path)
    task = next(t for t in doc["tasks"] if t["id"] == tid)
    task["status"] = "completed"
    task["updated_at"] = doc["last_updated"] = now()
    replace_json(path, doc)
    held.close()


DONE = {"projects": projects, "execute": execute, "cdd": cdd, "iterative": iterative,
        "claude-tasks": claude_tasks}


def moved_on(layout, root, tid):
    """Whether a DONE reached task `tid` (for the bench's check that every run changed it)."""
    if layout == "cdd":
        return os.path.exists(os.path.join(root, "completed", tid))
    if layout == "execute":
        doc = read_json(os.path.join(root, "execute-state.json"))
        return doc["tasks"][tid]["status"] != "in_progress"
    if layout == "iterative":
        unit = read_json(os.path.join(root, "state.json"))["tasks"][tid]
        return unit["status"] != "in_progress" or unit.get("iterations_used", 0) > 3
    name = "tasks.json"
    doc = read_json(os.path.join(root, name))
    task = next(t for t in doc["tasks"] if t["id"] == tid)
    return task["status"] in ("COMPLETE", "completed")


def main():
    mode, layout, root = sys.argv[1], sys.argv[2], sys.argv[3]
    if mode == "done":
        json.load(sys.stdin)
        DONE[layout](root, sys.argv[4])
    elif mode == "check":
        stuck = [t for t in sys.argv[4:] if not moved_on(layout, root, t)]
        if stuck:
            print("not moved on: %s" % ", ".join(stuck), file=sys.stderr)
            sys.exit(1)
    else:
        sys.exit("unknown mode %s" % mode)


if __name__ == "__main__":
    main()
