#!/usr/bin/python3
"""test_viewer.py - GET /viewer in a real browser (headless Chromium through Selenium).

Run by tests/integration/test_viewer.c, which starts the daemon on 127.0.0.1 and stops it
by pid: python3 test_viewer.py BASE_URL SCREENSHOT_DIR. Loads the page, replays a predict, a
simulate and a validate request through the page's own controls, and reads what it drew
through window.impViewer (the page's read-only inspection object) and the canvas' pixels; a
422 shows its detail with its pointer marked in the request text; a request opens from the
address fragment. Screenshots go to SCREENSHOT_DIR for a person to look at. Exit status 0
when every check holds; each failed check is printed.

With --bench after the two arguments it measures frame times instead (a 1,000,000-triangle
world, 10,000 bodies in 3D; not part of make test).

Debian's packages: chromium, chromium-driver, python3-selenium (make deps-test).
"""
import json
import os
import sys
import tempfile
import time
import urllib.parse
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

BASE, SHOTS = sys.argv[1], sys.argv[2]
FAILED = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        FAILED.append(what)


def browser():
    opts = webdriver.ChromeOptions()
    opts.binary_location = "/usr/bin/chromium"
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--window-size=1280,800", "--no-first-run", "--disable-extensions",
              # WebGL on the CPU (SwiftShader) where there is no GPU: this page is trusted
              "--enable-unsafe-swiftshader",
              "--user-data-dir=" + tempfile.mkdtemp(prefix="impactd-viewer-")):
        opts.add_argument(a)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)


def replay(d, endpoint, request, world_id=""):
    """Fills the page's controls as a person would and presses Send; waits for the answer."""
    d.execute_script(
        "const e = document.getElementById('endpoint'); e.value = arguments[0]; e.onchange();"
        "document.getElementById('worldId').value = arguments[2];"
        "document.getElementById('request').value = arguments[1];"
        "document.getElementById('reply').value = '';",
        endpoint, request if isinstance(request, str) else json.dumps(request, indent=1 if len(str(request)) < 4096 else None), world_id)
    d.find_element(By.ID, "send").click()
    deadline = time.time() + 15
    while time.time() < deadline:
        st = d.execute_script("return [window.impViewer.endpoint, window.impViewer.httpStatus,"
                              " document.getElementById('reply').value]")
        if st[0] == endpoint and st[1] and st[2]:
            time.sleep(0.05)
            return json.loads(st[2]) if st[2] else None
        time.sleep(0.05)
    raise RuntimeError("no answer for " + endpoint)


def view(d, expr):
    return d.execute_script("return window.impViewer." + expr)


def pixel(d, x, y):
    """The canvas pixel (RGBA) at CSS position (x, y)."""
    return d.execute_script(
        "const c = document.getElementById('canvas'), r = window.devicePixelRatio || 1;"
        "return Array.from(c.getContext('2d').getImageData(Math.round(arguments[0] * r),"
        " Math.round(arguments[1] * r), 1, 1).data);", x, y)


def body_drawn(d, index, what):
    """A pixel at the body's drawn centre has the body's colour (blended on itself only)."""
    bp = view(d, "bodyPixel(%d)" % index)
    px = pixel(d, bp["x"], bp["y"])
    want = [int(bp["color"][i:i + 2], 16) for i in (1, 3, 5)]
    close = px[3] > 0 and all(abs(px[i] - want[i]) <= 40 for i in range(3))
    check(close, "%s: body %d drawn at (%.0f, %.0f): pixel %s, colour %s" %
          (what, index, bp["x"], bp["y"], px, bp["color"]))


def upload(world):
    """POST /v1/worlds (from the test, not the page); the world's id."""
    req = urllib.request.Request(BASE + "/v1/worlds", data=json.dumps(world).encode(),
                                 headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())["id"]


def shot(d, name):
    d.save_screenshot(os.path.join(SHOTS, "viewer-" + name + ".png"))


PREDICT = {"bodies": [
    {"id": "ball", "radius": 0.5, "position": [0, 4], "velocity": [2, 0],
     "acceleration": [0, -9.81]},
    {"id": "floor", "shape": {"type": "box", "half_extents": [10, 0.5]}, "position": [0, -0.5],
     "static": True},
    {"id": "box", "shape": {"type": "box", "half_extents": [0.5, 0.5]}, "position": [4, 0.5],
     "velocity": [-1, 0]},
    {"id": "tri", "shape": {"type": "polygon", "vertices": [[-0.5, -0.5], [0.5, -0.5], [0, 0.5]]},
     "position": [-4, 3], "velocity": [2, -1]}],
    "horizon": 3}

SIMULATE = {"bodies": [
    {"id": "ball", "radius": 0.5, "position": [0, 2], "velocity": [1, 0], "restitution": 0.8},
    {"id": "ball2", "radius": 0.5, "position": [3, 3], "velocity": [-1, 0], "restitution": 0.8},
    {"id": "floor", "shape": {"type": "halfspace", "normal": [0, 1], "offset": 0},
     "position": [0, 0], "static": True}],
    "horizon": 2, "gravity": [0, -9.81]}

SETTLE = {"bodies": [
    {"id": "box", "shape": {"type": "box", "half_extents": [0.5, 0.25]}, "position": [0, 2],
     "velocity": [1, 0], "restitution": 0.5},
    {"id": "floor", "shape": {"type": "halfspace", "normal": [0, 1], "offset": 0},
     "position": [0, 0], "static": True}],
    "horizon": 2, "gravity": [0, -9.81]}

VALIDATE = {"body": {"radius": 0.5, "position": [0, 0]}, "to": [6, 1], "dt": 0.1,
            "world": [{"id": "wall-2", "shape": {"type": "box", "half_extents": [0.5, 3]},
                       "position": [3, 0], "static": True}], "max_speed": 100}

# A 422 whose pointer names a member deep in the request.
BAD_TOI = '{\n  "a": {"radius": 0.5, "position": [0, 0], "velocity": [1, 0]},\n' \
          '  "b": {"shape": {"type": "sphere", "radius": -2}, "position": [3, 0]}\n}'


def bench():
    """Frame times (not part of make test): a 1,000,000-triangle world and 10,000 bodies in 3D."""
    d = browser()
    try:
        d.get(BASE + "/viewer")
        n = 708  # a 708 x 708 heightfield: 2 * 707 * 707 = 999,698 triangles
        world = {"colliders": [{"id": "terrain", "shape": {
            "type": "heightfield", "rows": n, "cols": n, "spacing": [1, 1],
            "heights": [round(3 * ((i * 2654435761) % 1000) / 1000.0, 3) for i in range(n * n)]},
            "position": [0, 0, 0]}]}
        t = time.time()
        wid = upload(world)
        print("world of %d triangles stored in %.1f s" % (2 * (n - 1) ** 2, time.time() - t))
        d.execute_script("document.getElementById('worldText').value = arguments[0]", json.dumps(world))
        t = time.time()
        replay(d, "worlds/raycast", {"rays": [{"origin": [350.5, 50, 350.5], "direction": [0, -1, 0]}]}, wid)
        print("replayed (parse, upload to the GPU, first frame) in %.1f s" % (time.time() - t))
        ms = sorted(view(d, "redraw()") for _ in range(5))
        print("frame time, %d world triangles (WebGL), whole view (level of detail %s), 5 frames: %s ms" %
              (view(d, "glTriangles"), view(d, "glLevel"), ", ".join("%.1f" % x for x in ms)))
        d.execute_script("document.getElementById('canvas').dispatchEvent(new WheelEvent('wheel',"
                         " {deltaY: -1500, clientX: 850, clientY: 320}))")
        ms = sorted(view(d, "redraw()") for _ in range(5))
        print("frame time, zoomed in (level of detail %s), 5 frames: %s ms" %
              (view(d, "glLevel"), ", ".join("%.1f" % x for x in ms)))
        shot(d, "bench-1m-triangles-zoomed")
        shot(d, "bench-1m-triangles")
        d.execute_script("document.getElementById('worldText').value = ''")
        grid = {"bodies": [{"radius": 0.3, "position": [i % 100, (i // 100) % 10, i // 1000],
                            "velocity": [0.1, 0, 0]} for i in range(10000)], "horizon": 1}
        replay(d, "scenes/predict", grid)
        ms = sorted(view(d, "redraw()") for _ in range(5))
        print("frame time, %d bodies in 3D with paths (%d spheres by WebGL), 5 frames: %s ms" %
              (view(d, "drawnBodies"), view(d, "glSpheres"), ", ".join("%.1f" % x for x in ms)))
        shot(d, "bench-10000-bodies-3d")
    finally:
        d.quit()
    return 0


def main():
    os.makedirs(SHOTS, exist_ok=True)
    if "--bench" in sys.argv[3:]:
        return bench()
    t_start = time.time()
    d = browser()
    try:
        d.get(BASE + "/viewer")
        check(d.title == "impactd viewer", "GET /viewer is the page: title %r" % d.title)
        check(d.execute_script("return typeof window.impViewer === 'object'"),
              "window.impViewer is there")

        # scenes/predict: contacts listed, timeline = horizon, clicking one selects it
        rp = replay(d, "scenes/predict", PREDICT)
        n = len(rp["collisions"])
        check(n >= 2, "predict: the service found %d contacts" % n)
        check(view(d, "contacts.length") == n, "predict: %d contacts listed" % n)
        items = d.find_elements(By.CSS_SELECTOR, "#contacts li[data-index]")
        check(len(items) == n, "predict: %d list entries" % len(items))
        check(view(d, "timelineLength") == PREDICT["horizon"], "predict: timeline is the horizon")
        items[1].click()
        c1 = rp["collisions"][1]
        check(view(d, "selected") == 1 and abs(view(d, "time") - c1["time"]) < 1e-12,
              "predict: clicking contact 1 moves the timeline to t = %.6g" % c1["time"])
        check("sel" in items[1].get_attribute("class"), "predict: the clicked entry is marked")
        ids = [b["id"] for b in PREDICT["bodies"]]
        body_drawn(d, ids.index(c1["a"]), "predict at contact 1, body a")
        body_drawn(d, ids.index(c1["b"]), "predict at contact 1, body b")
        # off every body: nothing drawn in a far corner
        check(pixel(d, 3, 3)[3] == 0, "predict: the corner of the canvas is empty")
        shot(d, "predict")

        # scenes/simulate: events on the timeline, step to next event, replay agrees with the reply
        rp = replay(d, "scenes/simulate", SIMULATE)
        check(view(d, "contacts.length") == len(rp["events"]) > 0,
              "simulate: %d events listed" % len(rp["events"]))
        check(view(d, "timelineLength") == rp["time"], "simulate: timeline ends at %g" % rp["time"])
        err = view(d, "simEndError")
        check(err is not None and err < 1e-9,
              "simulate: the paths drawn end where the service says (within %s)" % err)
        d.execute_script("document.getElementById('scrub').value = 0;"
                         "document.getElementById('scrub').oninput()")
        d.find_element(By.ID, "nextEv").click()
        check(abs(view(d, "time") - rp["events"][0]["time"]) < 1e-12 and view(d, "selected") == 0,
              "simulate: next event goes to the first event, t = %.6g" % rp["events"][0]["time"])
        d.find_element(By.ID, "nextEv").click()
        check(view(d, "selected") == 1, "simulate: and then to the second")
        body_drawn(d, 0, "simulate at event 2")
        shot(d, "simulate")
        # a box that comes to rest on the floor: the rest is in no event; its last path is fitted
        rp = replay(d, "scenes/simulate", SETTLE)
        end = view(d, "simEnd(0)")
        check(rp["stats"]["rests"] == 1 and view(d, "simFitted") == 1 and
              max(abs(end[k] - rp["bodies"][0]["position"][k]) for k in range(2)) < 1e-9,
              "simulate: a resting box's path ends at the reply's position %s (%s)" % (rp["bodies"][0]["position"], end))

        # validate: the violation listed, the body drawn at its start
        rp = replay(d, "validate", VALIDATE)
        timed = [v for v in rp["violations"] if "time" in v]
        check(not rp["valid"] and view(d, "contacts.length") == len(timed) > 0,
              "validate: %d violations on the timeline" % len(timed))
        check(view(d, "timelineLength") == VALIDATE["dt"], "validate: timeline is dt")
        check(view(d, "slidesDrawn") == len(rp["path"]) - 1 >= 1,
              "validate: the corrected path's %d slides drawn" % (len(rp["path"]) - 1))
        body_drawn(d, 0, "validate at the start")
        shot(d, "validate")

        # a problem+json: its detail shown, the pointer's text marked
        rp = replay(d, "toi", BAD_TOI)
        prob = view(d, "problem")
        check(prob is not None and prob.get("status") == 422 and prob.get("pointer") == "/b/shape/radius",
              "problem: 422 at /b/shape/radius (%s)" % (prob and prob.get("pointer")))
        check(d.find_element(By.ID, "problem").is_displayed(), "problem: the box is shown")
        check(rp["detail"] in d.find_element(By.ID, "problemDetail").text, "problem: its detail is shown")
        check(view(d, "pointerText") == "-2" and d.find_element(By.ID, "pointerMark").text == "-2",
              "problem: the pointer marks %r in the request" % view(d, "pointerText"))
        shot(d, "problem")
        # malformed JSON: no pointer, but the parser's line and column are marked
        rp = replay(d, "toi", '{"a": {"radius": 1, "position": [0, 0]},\n "b": {"radius": 1, "position": [3, 0],}}')
        check(view(d, "httpStatus") == 400 and view(d, "pointerText") == "}",
              "malformed JSON: the parser's position is marked (%r; %s)" % (view(d, "pointerText"), rp.get("detail")))

        # a request opened from the address fragment
        toi = {"a": {"radius": 0.5, "position": [0, 0], "velocity": [1, 0]},
               "b": {"radius": 0.5, "position": [3, 0]}}
        d.get(BASE + "/viewer#endpoint=toi&request=" + urllib.parse.quote(json.dumps(toi)))
        deadline = time.time() + 10
        while time.time() < deadline and view(d, "httpStatus") != 200:
            time.sleep(0.05)
        check(view(d, "httpStatus") == 200 and view(d, "contacts.length") == 1 and
              abs(view(d, "time") - 2.0) < 1e-12, "fragment: the toi replays, contact at t = 2 (%s)" %
              d.execute_script("const v = window.impViewer; return [v.httpStatus, v.contacts, v.time]"))
        body_drawn(d, 1, "fragment toi")
        shot(d, "fragment")

        # 3D: a stored world (a heightfield and a mesh), its World JSON pasted, rays against it
        world = {"colliders": [
            {"id": "hf", "shape": {"type": "heightfield", "rows": 20, "cols": 20, "spacing": [1, 1],
                                   "heights": [0.2 * ((i * 7) % 5) for i in range(400)]},
             "position": [0, 0, 0]},
            {"id": "ramp", "shape": {"type": "mesh", "vertices": [[0, 0, 0], [4, 0, 0], [4, 3, 4], [0, 3, 4]],
                                     "triangles": [[0, 1, 2], [0, 2, 3]]}, "position": [22, 0, 0]}]}
        wid = upload(world)
        d.execute_script("document.getElementById('worldText').value = arguments[0]", json.dumps(world))
        rays = {"rays": [{"origin": [5.5, 10, 5.5], "direction": [0, -1, 0]},
                         {"origin": [24, 10, 2], "direction": [0, -1, 0], "id": "r"},
                         {"origin": [100, 5, 2], "direction": [0, -1, 0]}]}
        rp = replay(d, "worlds/raycast", rays, wid)
        hits = [h["hit"] for h in rp["hits"]]
        check(view(d, "httpStatus") == 200 and hits == [True, True, False], "3D raycast: hits %s" % hits)
        check(view(d, "dimension") == 3, "3D raycast: drawn in 3D")
        check(view(d, "contacts.length") == 2, "3D raycast: the 2 hits listed")
        want = 2 * 19 * 19 + 2
        check(view(d, "glTriangles") == want, "3D: WebGL drew %s world triangles (want %d)"
              % (view(d, "glTriangles"), want))
        at = view(d, "pixelOf(%s)" % json.dumps(rp["hits"][0]["point"]))
        gp = view(d, "glPixel(%f, %f)" % (at["x"] + 3, at["y"] + 3))
        check(gp is not None and gp[3] == 255 and max(gp[:3]) < 240,
              "3D: the terrain is drawn by WebGL next to the first hit: pixel %s" % gp)
        op = pixel(d, at["x"], at["y"])
        check(op[3] > 0 and op[0] > 150 and op[1] < 100, "3D: the hit is marked on the 2D layer: pixel %s" % op)
        shot(d, "raycast-3d")

        # 3D, many bodies: spheres drawn by WebGL as shaded sprites with depth
        cloud = {"bodies": [{"radius": 0.4, "position": [i % 11, (i // 11) % 7, i // 77], "velocity": [0, 0, 0.5]}
                            for i in range(1001)], "horizon": 1}
        d.execute_script("document.getElementById('worldText').value = ''")
        replay(d, "scenes/predict", cloud)
        check(view(d, "glSpheres") == 1001, "3D: %s of 1001 spheres drawn by WebGL" % view(d, "glSpheres"))
        bp = view(d, "bodyPixel(1000)")
        gp = view(d, "glPixel(%f, %f)" % (bp["x"], bp["y"]))
        check(gp[3] == 255 and max(gp[:3]) < 240, "3D: the last sphere is drawn where it is: pixel %s" % gp)
        shot(d, "predict-3d-1001")
        d.execute_script("document.getElementById('worldText').value = ''")

        # the page's state saved to a file and loaded back from it
        d.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": SHOTS})
        saved = os.path.join(SHOTS, "impactd-viewer-state.json")
        if os.path.exists(saved):
            os.remove(saved)
        replay(d, "scenes/predict", PREDICT)
        d.find_elements(By.CSS_SELECTOR, "#contacts li[data-index]")[2].click()
        d.find_element(By.ID, "saveState").click()
        deadline = time.time() + 10
        while time.time() < deadline and not os.path.exists(saved):
            time.sleep(0.1)
        state = json.load(open(saved)) if os.path.exists(saved) else {}
        check(state.get("endpoint") == "scenes/predict" and json.loads(state.get("request", "null")) == PREDICT
              and state.get("selected") == 2, "state: saved to %s" % saved)
        replay(d, "toi", {"a": {"radius": 1, "position": [0, 0]}, "b": {"radius": 1, "position": [5, 0]}})
        d.find_element(By.ID, "loadState").send_keys(os.path.abspath(saved))
        deadline = time.time() + 10
        while time.time() < deadline and view(d, "endpoint") != "scenes/predict":
            time.sleep(0.05)
        time.sleep(0.2)
        check(view(d, "endpoint") == "scenes/predict" and view(d, "selected") == 2 and
              view(d, "contacts.length") == 3 and abs(view(d, "time") - state.get("t", -1)) < 1e-12,
              "state: loaded back (predict, contact 2 selected, t = %s)" % view(d, "time"))

        # nothing came from anywhere but this daemon
        urls = d.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
        check(all(u.startswith(BASE) for u in urls), "offline: every resource from %s (%d)" % (BASE, len(urls)))
        # and the page's Content-Security-Policy refuses any other origin (one on loopback here)
        blocked = d.execute_async_script(
            "const done = arguments[0]; let v = null;"
            "document.addEventListener('securitypolicyviolation', (e) => { v = e.violatedDirective; });"
            "fetch('http://127.0.0.2:9/x').then(() => done('fetched'), () => setTimeout(() => done(v), 100));")
        check(blocked == "connect-src", "offline: a fetch elsewhere is refused by the page's policy (%s)" % blocked)

        # frame time at 10,000 bodies (a 100 x 100 grid of circles)
        grid = {"bodies": [{"radius": 0.3, "position": [i % 100, i // 100], "velocity": [0.1, 0]}
                           for i in range(10000)], "horizon": 1}
        replay(d, "scenes/predict", grid)
        ms = sorted(view(d, "redraw()") for _ in range(5))[2]
        check(view(d, "drawnBodies") == 10000, "10,000 bodies: %d drawn" % view(d, "drawnBodies"))
        body_drawn(d, 9999, "10,000 bodies, the last")
        print("frame time, 10,000 circles with paths (2D, median of 5): %.1f ms" % ms)
        shot(d, "predict-10000")
    finally:
        d.quit()
    print("%d checks failed; %.1f s; screenshots in %s" % (len(FAILED), time.time() - t_start, SHOTS))
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
