"""A KiCad Python started ahead of its job (python-spare.ts says why).

    python3 spare.py IDLE_SECONDS

It imports pcbnew and draws one text, so KiCad loads its stroke font (a third of a second, on
the first text a board holds), then waits for one job on stdin: a JSON line
{"script": PATH, "args": [...]}. It runs the script as `python3 PATH ARGS...` would: its
tracebacks name the script's lines, and its exit code is the script's. It exits at once when
stdin closes, or when no job came within IDLE_SECONDS.
"""
import json, os, runpy, sys, threading
import pcbnew

board = pcbnew.BOARD()
text = pcbnew.PCB_TEXT(board)
text.SetText("spare")
text.GetEffectiveShape()

idle = threading.Timer(float(sys.argv[1]), os._exit, [0])
idle.daemon = True
idle.start()
line = sys.stdin.readline()
idle.cancel()
if not line:
    sys.exit(0)
job = json.loads(line)
sys.argv = [job["script"]] + job["args"]
runpy.run_path(job["script"], run_name="__main__")
