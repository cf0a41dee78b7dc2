"""Plays the window manager's part in the desktop tests: Xvfb runs none, so nothing else would
ask a window to close or take the keyboard focus away from it.

    x11.py close WINDOW   send WINDOW the WM_DELETE_WINDOW message a title bar's close button sends
    x11.py unfocus        give the keyboard focus to no window (PointerRoot)

Plain Xlib through ctypes: python3 and libX11 are all it needs.
"""

import ctypes
import sys

xlib = ctypes.cdll.LoadLibrary("libX11.so.6")
Display = ctypes.c_void_p
Window = Atom = ctypes.c_ulong

xlib.XOpenDisplay.argtypes = [ctypes.c_char_p]
xlib.XOpenDisplay.restype = Display
xlib.XInternAtom.argtypes = [Display, ctypes.c_char_p, ctypes.c_int]
xlib.XInternAtom.restype = Atom
xlib.XSetInputFocus.argtypes = [Display, Window, ctypes.c_int, ctypes.c_ulong]
xlib.XSync.argtypes = [Display, ctypes.c_int]
xlib.XCloseDisplay.argtypes = [Display]

CLIENT_MESSAGE = 33
POINTER_ROOT = 1
REVERT_TO_POINTER_ROOT = 1
CURRENT_TIME = 0


class XClientMessageEvent(ctypes.Structure):
    _fields_ = [
        ("type", ctypes.c_int),
        ("serial", ctypes.c_ulong),
        ("send_event", ctypes.c_int),
        ("display", Display),
        ("window", Window),
        ("message_type", Atom),
        ("format", ctypes.c_int),
        ("data", ctypes.c_long * 5),
    ]


class XEvent(ctypes.Union):
    _fields_ = [("xclient", XClientMessageEvent), ("pad", ctypes.c_long * 24)]


xlib.XSendEvent.argtypes = [Display, Window, ctypes.c_int, ctypes.c_long, ctypes.POINTER(XEvent)]


def main(argv):
    display = xlib.XOpenDisplay(None)
    if not display:
        sys.exit("x11.py: cannot open the display (is DISPLAY set?)")
    try:
        if argv[:1] == ["close"] and len(argv) == 2:
            event = XEvent()
            event.xclient.type = CLIENT_MESSAGE
            event.xclient.window = int(argv[1])
            event.xclient.message_type = xlib.XInternAtom(display, b"WM_PROTOCOLS", 0)
            event.xclient.format = 32
            event.xclient.data[0] = xlib.XInternAtom(display, b"WM_DELETE_WINDOW", 0)
            event.xclient.data[1] = CURRENT_TIME
            if not xlib.XSendEvent(display, int(argv[1]), 0, 0, ctypes.byref(event)):
                sys.exit("x11.py: XSendEvent failed")
        elif argv == ["unfocus"]:
            xlib.XSetInputFocus(display, POINTER_ROOT, REVERT_TO_POINTER_ROOT, CURRENT_TIME)
        else:
            sys.exit(__doc__)
        xlib.XSync(display, 0)
    finally:
        xlib.XCloseDisplay(display)


main(sys.argv[1:])
