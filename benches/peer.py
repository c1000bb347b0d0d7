#!/usr/bin/env python3
"""The Python peer of `cargo bench --bench tasks`: a TodoWrite PostToolUse hook doing the same
durable work as taskhook's claude-tasks mirror, written the way a careful Python hook would be.

Reads the hook payload on stdin and the list path as argv[1]; takes an exclusive fcntl lock
on the sidecar `.tasks.json.lock`; json.load()s the list; mirrors the todos (id = "todo-" +
FNV-1a 64 of the content, upsert, vanished TodoWrite todos removed); recomputes `blocked`
for every task; stamps what changed; writes a temp file in the same folder with 2-space JSON,
fsyncs it, os.replace()s it over the list and fsyncs the folder. A change that changes
nothing writes nothing.
"""
import fcntl
import json
import os
import sys
import time
import uuid


def todo_id(content):
    h = 0xCBF29CE484222325
    for b in content.encode("utf-8"):
        h ^= b
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return "todo-%016x" % h


def main():
    path = sys.argv[1]
    payload = json.load(sys.stdin)
    todos = payload.get("tool_input", {}).get("todos", [])
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    folder = os.path.dirname(path)
    lock = open(os.path.join(folder, ".tasks.json.lock"), "a")
    fcntl.flock(lock, fcntl.LOCK_EX)
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    tasks = doc["tasks"]
    by_id = {t["id"]: t for t in tasks}
    changed = set()
    seen = set()
    for todo in todos:
        content = todo.get("content", "")
        if not content.strip():
            continue
        base = todo_id(content)
        tid, n = base, 1
        while tid in seen:
            n += 1
            tid = "%s-%d" % (base, n)
        seen.add(tid)
        status = todo.get("status") if todo.get("status") in ("pending", "in_progress", "completed") else "pending"
        task = by_id.get(tid)
        if task is None:
            task = {"id": tid, "description": content, "status": status, "created_at": now,
                    "updated_at": now, "assignee": None, "dependencies": [],
                    "metadata": {"source": "agent", "custom_fields": {"origin": "TodoWrite"}}}
            tasks.append(task)
            by_id[tid] = task
            changed.add(tid)
        before = json.dumps(task, sort_keys=True)
        task["description"] = content
        if not (status == "pending" and task.get("status") == "blocked"):
            task["status"] = status
        meta = task.setdefault("metadata", {})
        meta["source"] = "agent"
        cf = meta.setdefault("custom_fields", {})
        cf["origin"] = "TodoWrite"
        if "activeForm" in todo:
            cf["activeForm"] = todo["activeForm"]
        if json.dumps(task, sort_keys=True) != before:
            changed.add(tid)
    gone = [t["id"] for t in tasks
            if t.get("metadata", {}).get("custom_fields", {}).get("origin") == "TodoWrite"
            and t["id"] not in seen]
    if gone:
        drop = set(gone)
        tasks[:] = [t for t in tasks if t["id"] not in drop]
        for t in tasks:
            if any(d in drop for d in t.get("dependencies", [])):
                t["dependencies"] = [d for d in t["dependencies"] if d not in drop]
                changed.add(t["id"])
    done = {t["id"] for t in tasks if t["status"] == "completed"}
    for t in tasks:
        ready = all(d in done for d in t.get("dependencies", []))
        if t["status"] == "pending" and not ready:
            t["status"] = "blocked"
            changed.add(t["id"])
        elif t["status"] == "blocked" and ready:
            t["status"] = "pending"
            changed.add(t["id"])
    if not changed and not gone:
        return
    for t in tasks:
        if t["id"] in changed:
            t["updated_at"] = now
    doc["version"] = 2
    doc["last_updated"] = now
    tmp = os.path.join(folder, ".tasks.json.tmp-%s" % uuid.uuid4())
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2, ensure_ascii=False)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fd = os.open(folder, os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)


if __name__ == "__main__":
    main()
