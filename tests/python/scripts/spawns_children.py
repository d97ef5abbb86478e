"""Starts three processes that would outlive it: one in its process group, one in a
session of its own (start_new_session=True) and one made a daemon by a double fork.
Writes "PID START" of each (START: field 22 of /proc/PID/stat, so a reused pid is not
taken for it) to FOLDER/group.pid, session.pid and daemon.pid, records 3 steps, then
ends as its second argument says: "exit" returns at once, "wait" records until stopped.

    spawns_children.py FOLDER exit|wait
"""
import os
import subprocess
import sys
import time

import ampbench

folder, how = sys.argv[1], sys.argv[2]
SLEEPER = [sys.executable, "-c", "import time\nwhile True:\n    time.sleep(1)"]


def identity(pid):
    with open("/proc/%d/stat" % pid) as f:
        text = f.read()
    return "%d %s" % (pid, text[text.rindex(")") + 2:].split()[19])


def note(name, pid):
    path = os.path.join(folder, name + ".pid")
    with open(path + ".part", "w") as f:
        f.write(identity(pid))
    os.rename(path + ".part", path)


quiet = dict(stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
note("group", subprocess.Popen(SLEEPER, **quiet).pid)
note("session", subprocess.Popen(SLEEPER, start_new_session=True, **quiet).pid)
r, w = os.pipe()
middle = os.fork()
if middle == 0:
    os.setsid()
    daemon = os.fork()
    if daemon == 0:
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.closerange(3, 1024)
        os.execv(sys.executable, SLEEPER)
    os.write(w, str(daemon).encode())
    os._exit(0)
os.close(w)
os.waitpid(middle, 0)
note("daemon", int(os.read(r, 32)))

rec = ampbench.Recorder()
for i in range(3):
    rec.step(0.5, samples=8)
rec.flush()
while how == "wait":
    rec.step(0.5, samples=8)
    rec.flush()
    time.sleep(0.05)
