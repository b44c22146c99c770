"""Finds the function definitions of a C++ file by its braces, not its layout.

Used by check_sizes.py (how long each function is) and check_layers.py
(which room defines the functions a public header declares). The scanner
blanks comments, string and character literals (raw strings included), then
walks the braces: a `{` opened where a function may be defined (namespace,
class or file scope) whose head, the text since the previous `;`, `{` or `}`
of that scope, ends like a function's (`) {`, `) const {`, `) -> T {`,
`) override {`, a constructor's initializer list) starts a function that
ends at its matching `}`. A signature wrapped over several lines is one
head, whatever its indentation. Lambdas and local classes inside a function
belong to it.
"""
import re

_RAW = re.compile(r'R"([^()\\ ]{0,16})\(')
_FUNCTION_TAIL = re.compile(
    r"\)\s*(?:const\s*|volatile\s*|&&?\s*|noexcept\s*(?:\([^()]*\)\s*)?|override\s*|final\s*|mutable\s*)*"
    r"(?:->\s*[^{};]+)?$")
_SCOPE_WORD = re.compile(r"\b(namespace|class|struct|union|enum)\b")
_INIT_LIST = re.compile(r"\)\s*(?:noexcept\s*)?:\s*[A-Za-z_]")
_CONTROL = re.compile(r"(?:if|for|while|switch|catch|do|else|try|return)\b")


def blank(text):
    """`text` with comments and literals replaced by spaces (newlines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c == "#" and text[:i].rstrip(" \t").endswith(("\n", "")) and (i == 0 or text[:i].rstrip(" \t")[-1:] in ("", "\n")):
            j = i
            while True:  # a directive, with its continuation lines
                j = text.find("\n", j)
                if j < 0 or text[j - 1] != "\\":
                    break
                j += 1
            j = n if j < 0 else j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
        elif c == "R" and _RAW.match(text, i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = _RAW.match(text, i)
            end = text.find(")" + m.group(1) + '"', m.end())
            j = n if end < 0 else end + len(m.group(1)) + 2
        elif c in "\"'" and not (c == "'" and i > 0 and text[i - 1].isalnum()):  # 1'000 is a digit separator
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j += 1
        else:
            out.append(c)
            i += 1
            continue
        out.append("".join(ch if ch == "\n" else " " for ch in text[i:j]))
        i = j
    return "".join(out)


def _matching(code, i):
    """Index just past the brace that closes the `{` at `i`."""
    depth = 0
    for j in range(i, len(code)):
        if code[j] == "{":
            depth += 1
        elif code[j] == "}":
            depth -= 1
            if depth == 0:
                return j + 1
    return len(code)


def _head_kind(head):
    """'function', 'scope' (namespace, class, extern "C") or 'other' for the head of a `{`."""
    h = " ".join(head.split())
    if _FUNCTION_TAIL.search(h) or (_INIT_LIST.search(h) and not _SCOPE_WORD.match(h)):
        if "=" in re.sub(r"operator\s*\S+?\s*\(.*", "", h).split("(")[0] or _CONTROL.match(h):
            return "other"
        return "function"
    if _SCOPE_WORD.search(h) and "=" not in h and "(" not in h or h.startswith("extern"):
        return "other" if re.search(r"\benum\b", h) else "scope"
    return "other"


def _name_offset(head):
    """Where in a function's head its name's line starts (macros before it are not part of it)."""
    name = function_name(head).split("::")[-1]
    k = head.find(name + "(") if name else -1
    if k < 0:
        k = len(head) - len(head.lstrip())
    return head.rfind("\n", 0, k) + 1


def function_name(head):
    """The name a function's head defines (`Ns::Name`, `operator==`), or ''.
    The parameter list is the last one of the head (macros may come before
    it), cut before a constructor's initializer list."""
    h = " ".join(head.split())
    init = re.search(r"\)\s*(?:noexcept\s*)?:(?!:)\s*[A-Za-z_]", h)
    if init:
        h = h[:init.start() + 1]
    close = h.rfind(")")
    depth, k = 0, close
    while k >= 0:  # back to the parenthesis that opens the parameters
        depth += {")": 1, "(": -1}.get(h[k], 0)
        if depth == 0:
            break
        k -= 1
    m = re.search(r"((?:[A-Za-z_]\w*\s*(?:<[^()]*>)?\s*::\s*)*(?:~?[A-Za-z_]\w*|operator\s*\S+?))\s*$", h[:max(k, 0)])
    return re.sub(r"\s+", "", m.group(1)) if m else ""


def functions(text):
    """(first line, last line, name) of every function defined in C++ source `text`."""
    return [f[:3] for f in scoped_functions(text)]


def scoped_functions(text):
    """functions(text), each with a fourth item: whether its name is local to
    the file, i.e. a function at namespace scope (not a member) defined inside
    an anonymous namespace, or `static`; and a fifth: whether it is a member
    (defined inside a class)."""
    code = blank(text)
    found, i, head_start, n = [], 0, 0, len(code)
    init_list = False
    scopes = []  # the enclosing scopes: (index of their closing brace, anonymous namespace, a namespace)
    while i < n:
        while scopes and i >= scopes[-1][0]:
            scopes.pop()
        c = code[i]
        if c in ";}":
            head_start, init_list = i + 1, False
        elif c == "{":
            head = code[head_start:i]
            kind = _head_kind(head)
            flat = " ".join(head.split())
            if (init_list or _INIT_LIST.search(flat)) and re.search(r"[\w>]$", flat):
                init_list = True  # a member initialised with braces: the head goes on after it
                i = _matching(code, i)
                continue
            if kind == "scope":
                scopes.append((_matching(code, i) - 1, flat == "namespace", flat.startswith(("namespace", "extern"))))
                head_start, init_list = i + 1, False
            else:
                end = _matching(code, i)
                if kind == "function":
                    first = code.count("\n", 0, head_start + _name_offset(head)) + 1
                    name = function_name(head)
                    at_namespace = all(s[2] for s in scopes)
                    local = bool(name) and "::" not in name and at_namespace and (
                        any(s[1] for s in scopes) or re.match(r"(inline\s+)?static\b", flat) is not None)
                    found.append((first, code.count("\n", 0, end - 1) + 1, name, local, not at_namespace))
                i, head_start, init_list = end, end, False
                continue
        i += 1
    return found
