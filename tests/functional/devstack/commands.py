"""The command names a bash script runs, on every branch, found by parsing.

The harness catches a devstack function that the plugin calls on the
paths a run takes; this finds the calls on the paths it does not take (a
PostgreSQL clean-up, a mode not tested). Bash does the hard part: the
files are wrapped in a function and printed back with ``declare -f``,
which normalizes them (one command per line, no comments, no line
continuations). What is left is a small scanner over quotes, ``$(...)``,
``$((...))`` and the operators that start a new simple command.
"""

import re
import subprocess

# Words that may come before a command name, or stand where none is.
KEYWORDS = frozenset({
    '!', '{', '}', 'if', 'then', 'else', 'elif', 'fi', 'in', 'do', 'done',
    'while', 'until', 'esac', 'time'})
# Whose arguments are names, patterns and assignments, not commands.
DECLARATIONS = frozenset({'local', 'declare', 'export', 'readonly',
                          'typeset', 'unset', 'function', 'for', 'select',
                          'case'})
_ASSIGNMENT = re.compile(r'^[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=')
_FUNCTION = re.compile(r'^\s*function (\S+) \(\)\s*$', re.M)
# A case pattern line of normalized bash: `a | b)`, `*)`.
_CASE_PATTERN = re.compile(r'^\s*[^()$]*\)\s*$')
# A here-document's start: its body, up to the delimiter, is text.
_HEREDOC = re.compile(r'(?<!<)<<-?\s*([\'"]?)(\w+)\1(?!<)')


def normalized(paths):
    """``declare -f`` of a function whose body is the files' text."""
    body = '\n'.join(open(path).read() for path in paths)
    script = 'eval "_cb_probe() {\n$1\n}" && declare -f _cb_probe'
    result = subprocess.run(['bash', '-c', script, 'bash', body],
                            capture_output=True, text=True, timeout=30,
                            check=True)
    return result.stdout


def defined_functions(text):
    """Names of the functions a normalized text defines."""
    return set(_FUNCTION.findall(text))


class _Scanner:
    """Splits normalized bash into simple commands (lists of words)."""

    def __init__(self, text):
        self.text = text
        self.commands = []

    def scan(self, i=0, in_substitution=False):
        text = self.text
        words, word = [], []
        quote = None

        def end_word():
            if word:
                words.append(''.join(word))
                word.clear()

        def end_command():
            end_word()
            if words:
                self.commands.append(list(words))
                words.clear()

        while i < len(text):
            c = text[i]
            if quote == "'":
                quote = None if c == "'" else quote
                word.append(c)
                i += 1
            elif c == '\\':
                word.append(text[i:i + 2])
                i += 2
            elif text.startswith('$((', i) or (
                    quote is None and not word and
                    text.startswith('((', i)):
                i = self._skip_arithmetic(i)
                word.append('$((…))')
            elif text.startswith('$(', i):
                i = self.scan(i + 2, in_substitution=True)
                word.append('$(…)')
            elif quote == '"':
                quote = None if c == '"' else quote
                word.append(c)
                i += 1
            elif c in '"\'':
                quote = c
                word.append(c)
                i += 1
            elif c == ')' and in_substitution:
                end_command()
                return i + 1
            elif c == '&' and (text[i - 1:i] in ('>', '<') or
                               text.startswith('&>', i)):
                word.append(c)
                i += 1
            elif c in ' \t':
                end_word()
                i += 1
            elif c in ';|&\n()':
                end_command()
                i += 1
            else:
                word.append(c)
                i += 1
        end_command()
        return i

    def _skip_arithmetic(self, i):
        """Past the matching ``))``; commands in a ``$(...)`` inside it
        are still found."""
        depth = 0
        while i < len(self.text):
            if self.text.startswith('$(', i) and \
                    not self.text.startswith('$((', i):
                i = self.scan(i + 2, in_substitution=True)
                continue
            if self.text[i] == '(':
                depth += 1
            elif self.text[i] == ')':
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        return i


def command_names(text):
    """Every literal command name in normalized bash ``text``.

    Names built from a variable (``"$BIN/cellboot-manage"``) are left
    out: they are programs named by configuration.
    """
    lines, delimiter = [], None
    for line in text.splitlines():
        if delimiter is not None:
            if line.strip() == delimiter:
                delimiter = None
            continue
        if _CASE_PATTERN.match(line):
            continue
        lines.append(line)
        heredoc = _HEREDOC.search(line)
        if heredoc:
            delimiter = heredoc.group(2)
    scanner = _Scanner('\n'.join(lines))
    scanner.scan()
    names = set()
    # The function normalized() wraps the text in.
    scanner.commands = [words for words in scanner.commands
                        if words != ['_cb_probe']]
    for words in scanner.commands:
        for word in words:
            if word in KEYWORDS or _ASSIGNMENT.match(word):
                continue
            if word in DECLARATIONS or word.startswith('[['):
                break
            name = word.strip('"\'')
            if '$' not in name and not re.match(r'^\d*[<>]', name):
                names.add(name)
            break
    return names


def upper_case_variables(text):
    """Names of the upper-case variables a normalized text reads."""
    return set(re.findall(r'\$\{?#?!?([A-Z_][A-Z0-9_]*)(?![a-z])', text))


def bash_builtins():
    result = subprocess.run(['bash', '-c', 'compgen -b; compgen -k'],
                            capture_output=True, text=True, timeout=30,
                            check=True)
    return set(result.stdout.split())
