#!/usr/bin/env python3
"""ansi2png.py CAPTURE.ansi OUT.png - draws a `tmux capture-pane -e` capture
(text with SGR colour sequences) as a terminal screenshot with ImageMagick:
one cell per character on a fixed grid, DejaVu Sans Mono, xterm-256 colours.
Block elements (bars, sparklines, shades) are drawn as rectangles so they
join up like on a real terminal. Used by `make screenshots`."""
import re
import subprocess
import sys

FONT = "DejaVu-Sans-Mono"
PT = 15
CW, CH = 9, 19          # cell size in pixels for 15 pt DejaVu Sans Mono
PAD = 10
DEF_FG, DEF_BG = (0xd0, 0xd0, 0xd0), (0x1c, 0x1c, 0x1c)
BASE16 = [(0x00, 0x00, 0x00), (0xcd, 0x00, 0x00), (0x00, 0xcd, 0x00), (0xcd, 0xcd, 0x00),
          (0x1e, 0x90, 0xff), (0xcd, 0x00, 0xcd), (0x00, 0xcd, 0xcd), (0xe5, 0xe5, 0xe5),
          (0x7f, 0x7f, 0x7f), (0xff, 0x00, 0x00), (0x00, 0xff, 0x00), (0xff, 0xff, 0x00),
          (0x5c, 0x5c, 0xff), (0xff, 0x00, 0xff), (0x00, 0xff, 0xff), (0xff, 0xff, 0xff)]


def xterm(n):
    if n < 16:
        return BASE16[n]
    if n < 232:
        n -= 16
        lv = [0, 95, 135, 175, 215, 255]
        return (lv[n // 36], lv[(n // 6) % 6], lv[n % 6])
    g = 8 + (n - 232) * 10
    return (g, g, g)


def parse(text):
    """Rows of cells (char, fg, bg, bold)."""
    rows = []
    for line in text.split("\n"):
        fg, bg, bold, dim, rev = None, None, False, False, False
        cells = []
        i = 0
        while i < len(line):
            m = re.match(r"\x1b\[([0-9;]*)m", line[i:])
            if m:
                params = [int(p) if p else 0 for p in m.group(1).split(";")]
                j = 0
                while j < len(params):
                    p = params[j]
                    if p == 0:
                        fg, bg, bold, dim, rev = None, None, False, False, False
                    elif p == 1:
                        bold = True
                    elif p == 2:
                        dim = True
                    elif p == 7:
                        rev = True
                    elif p == 22:
                        bold = dim = False
                    elif p == 27:
                        rev = False
                    elif 30 <= p <= 37:
                        fg = xterm(p - 30)
                    elif 90 <= p <= 97:
                        fg = xterm(p - 90 + 8)
                    elif 40 <= p <= 47:
                        bg = xterm(p - 40)
                    elif 100 <= p <= 107:
                        bg = xterm(p - 100 + 8)
                    elif p == 39:
                        fg = None
                    elif p == 49:
                        bg = None
                    elif p in (38, 48) and j + 2 < len(params) and params[j + 1] == 5:
                        c = xterm(params[j + 2])
                        if p == 38:
                            fg = c
                        else:
                            bg = c
                        j += 2
                    elif p in (38, 48) and j + 4 < len(params) and params[j + 1] == 2:
                        c = tuple(params[j + 2:j + 5])
                        if p == 38:
                            fg = c
                        else:
                            bg = c
                        j += 4
                    j += 1
                i += m.end()
                continue
            if line[i] == "\x1b":      # other sequences: skip
                m = re.match(r"\x1b\[[0-9;?]*[A-Za-z]", line[i:])
                i += m.end() if m else 1
                continue
            f, b = fg or DEF_FG, bg or DEF_BG
            if rev:
                f, b = b, f
            if dim:
                f = tuple((x + y) // 2 for x, y in zip(f, b))
            cells.append((line[i], f, b, bold))
            i += 1
        # tmux drops trailing blanks even when coloured: a background still
        # set at the end of the line ran to the edge (the status line).
        if bg is not None or rev:
            f, b = fg or DEF_FG, bg or DEF_BG
            cells.append((" ", b if rev else f, f if rev else b, False))
            cells[-1] = cells[-1] + ("pad",)
        rows.append(cells)
    while rows and not rows[-1]:
        rows.pop()
    return rows


def hexc(c):
    return "#%02x%02x%02x" % c


def mvg_escape(ch):
    return ch.replace("\\", "\\\\").replace("'", "\\'")


def main():
    src, out = sys.argv[1], sys.argv[2]
    cols = int(sys.argv[3]) if len(sys.argv) > 3 else None
    rows = parse(open(src, encoding="utf-8", errors="replace").read())
    ncols = cols or max(len(r) for r in rows)
    w, h = ncols * CW + 2 * PAD, len(rows) * CH + 2 * PAD
    draw = ["viewbox 0 0 %d %d" % (w, h), "fill '%s' rectangle 0,0 %d,%d" % (hexc(DEF_BG), w, h),
            "font '%s'" % FONT, "font-size %d" % PT, "text-antialias 1"]
    for y, r in enumerate(rows):
        if r and len(r[-1]) == 5:          # pad the coloured end of line to the edge
            last = r.pop()
            r = r + [(" ", last[1], last[2], False)] * (ncols - len(r))
        for x, (ch, f, b, bold) in enumerate(r):
            x0, y0 = PAD + x * CW, PAD + y * CH
            if b != DEF_BG:
                draw.append("fill '%s' rectangle %d,%d %d,%d" % (hexc(b), x0, y0, x0 + CW - 1, y0 + CH - 1))
            o = ord(ch)
            if ch == " ":
                continue
            if o == 0x2588:                                   # full block
                draw.append("fill '%s' rectangle %d,%d %d,%d" % (hexc(f), x0, y0, x0 + CW - 1, y0 + CH - 1))
            elif 0x2589 <= o <= 0x258f:                       # left 7/8 .. 1/8
                wd = max(1, round(CW * (0x2590 - o) / 8))
                draw.append("fill '%s' rectangle %d,%d %d,%d" % (hexc(f), x0, y0, x0 + wd - 1, y0 + CH - 1))
            elif 0x2581 <= o <= 0x2587:                       # lower 1/8 .. 7/8
                ht = max(1, round(CH * (o - 0x2580) / 8))
                draw.append("fill '%s' rectangle %d,%d %d,%d" % (hexc(f), x0, y0 + CH - ht, x0 + CW - 1, y0 + CH - 1))
            elif o in (0x2591, 0x2592, 0x2593):               # shades
                a = {0x2591: 0.25, 0x2592: 0.5, 0x2593: 0.75}[o]
                c = tuple(int(fc * a + bc * (1 - a)) for fc, bc in zip(f, b))
                draw.append("fill '%s' rectangle %d,%d %d,%d" % (hexc(c), x0, y0, x0 + CW - 1, y0 + CH - 1))
            else:
                draw.append("fill '%s' font-weight %d text %d,%d '%s'" %
                            (hexc(f), 700 if bold else 400, x0, y0 + CH - 5, mvg_escape(ch)))
    mvg = out + ".mvg"
    with open(mvg, "w", encoding="utf-8") as fh:
        fh.write("\n".join(draw) + "\n")
    # An MVG file as the image: ImageMagick's default policy forbids "-draw @file".
    subprocess.run(["convert", "mvg:" + mvg, out], check=True)
    import os
    os.unlink(mvg)


if __name__ == "__main__":
    main()
