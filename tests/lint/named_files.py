#!/usr/bin/env python3
"""lint: every file a comment names exists, and every section of ours a comment cites is there.

  named_files.py [REPO]       check the tracked (and untracked, not ignored) files of REPO
  named_files.py --self-test  plant one missing name of each form in a scratch tree and show
                              that each is caught (and that a clean tree passes)

What is read: the comments of C++, C, Go, protobuf and JavaScript files (// and /* */), of shell
scripts, CMake, YAML, Python and Helm templates (#), and the whole text of Markdown files.
Verbatim upstream copies (proto/kubelet/, hack/cluster/gomod/) are not read.

What counts as naming a file of this repository (anything else is prose):
  rooted    a path whose first folder is a top-level folder of the repository
            (cni/modes/mode_sriov.cc, hack/cluster/versions, tests/fakes/): the file or folder
            exists. A protoc output (proto/api.pb.h) exists when its .proto does, and a binary
            the build makes (cni/rdmanet) when its folder's CMakeLists.txt adds that executable.
  relative  ./ or ../ and a source extension (../lib.sh): exists, resolved from the file's
            folder, inside the repository.
  partial   a path with a known extension (but .c: the kernel's) whose first folder is a
            folder of the repository somewhere (dra/kubelet/cdi_spec.h, kube/api_error.h): some
            file's path ends so.
  bare      a file name with a source extension (mode.h, run.sh, CONTRIBUTING.md): some file
            of the repository has that name.
  section   a Markdown file and a quoted section (CONTRIBUTING.md, "Seams"; README, "Input
            limits"): a heading or a bold term of that file holds the words.
Not names: anything in angle brackets (<infiniband/verbs.h>, tests/<file>_test.cc), URLs,
absolute paths (/sys/class/net), globs and ${variables}, and paths in code rather than comments.
"""
import os
import re
import subprocess
import sys
import tempfile

KNOWN_EXT = ('.cc', '.h', '.c', '.sh', '.md', '.proto', '.py', '.go', '.txt', '.yaml', '.json',
             '.js', '.mjs', '.tpl')
# Bare names are checked only for source files: a bare config.json or rdmanet.env is a file at
# run time, not one of ours.
BARE_EXT = ('.cc', '.h', '.md', '.sh', '.proto', '.py')
SLASH_COMMENTS = ('.cc', '.h', '.c', '.go', '.proto', '.js', '.mjs')
HASH_COMMENTS = ('.sh', '.txt', '.cmake', '.yaml', '.yml', '.py', '.tpl')
VERBATIM = ('proto/kubelet/', 'hack/cluster/gomod/')

# A path-like token; not glued to what makes it a URL, an absolute path, an <include>, a glob
# or a ${variable}, and not cut out of a longer word.
TOKEN = re.compile(r'(?<![A-Za-z0-9_./:<>$@{~*\\-])'
                   r'((?:\.\.?/)*[A-Za-z0-9_.][A-Za-z0-9_.+-]*(?:/[A-Za-z0-9_.][A-Za-z0-9_.+-]*)*/?)'
                   r'(?![<>*{$A-Za-z0-9_./\\-])')
SECTION = re.compile(r'(?<![A-Za-z0-9_./-])([A-Za-z0-9_./-]*\.md|README),? "([^"]+)"')


def repo_files(repo):
    out = subprocess.run(['git', '-C', repo, 'ls-files', '-co', '--exclude-standard', '-z'],
                         check=True, capture_output=True).stdout.decode()
    return sorted(f for f in out.split('\0') if f and os.path.isfile(os.path.join(repo, f)))


def comment_lines(repo, path):
    """(line number, comment text) of each line of `path` that has a comment."""
    ext = os.path.splitext(path)[1]
    base = os.path.basename(path)
    try:
        with open(os.path.join(repo, path), encoding='utf-8', errors='replace') as f:
            lines = f.read().split('\n')
    except OSError:
        return
    if ext == '.md':
        yield from enumerate(lines, 1)
    elif ext in SLASH_COMMENTS:
        in_block = False
        for n, line in enumerate(lines, 1):
            if in_block or re.match(r'\s*/\*', line):
                in_block = '*/' not in line
                yield n, line
                continue
            m = re.search(r'(?:^|(?<=\s))//(.*)', line)
            if m:
                yield n, m.group(1)
    elif (ext in HASH_COMMENTS or base in ('CMakeLists.txt', 'Dockerfile') or
          (not ext and lines and lines[0].startswith('#!'))):
        for n, line in enumerate(lines, 1):
            m = re.search(r'(?:^|(?<=\s))#(.*)', line)
            if m:
                yield n, m.group(1)


class Tree:
    def __init__(self, repo):
        self.repo = repo
        self.files = set(repo_files(repo))
        self.dirs = set()
        for f in self.files:
            d = os.path.dirname(f)
            while d:
                self.dirs.add(d)
                d = os.path.dirname(d)
        self.top = {f.split('/')[0] for f in self.files if '/' in f}
        self.dir_names = {os.path.basename(d) for d in self.dirs}
        self.base_names = {os.path.basename(f) for f in self.files}
        self.executables = {}

    def exists(self, path):
        return path in self.files or path in self.dirs

    def built(self, path):
        """A protoc output whose .proto exists, or an executable its folder's CMake adds."""
        m = re.match(r'(.*?)\.(?:grpc\.)?pb\.(?:h|cc)$', path)
        if m and (m.group(1) + '.proto' in self.files or
                  '/' not in path and m.group(1) + '.proto' in self.base_names):
            return True
        folder, name = os.path.split(path)
        if folder not in self.executables:
            cml = os.path.join(self.repo, folder, 'CMakeLists.txt')
            text = open(cml, encoding='utf-8').read() if os.path.isfile(cml) else ''
            self.executables[folder] = set(re.findall(r'add_executable\(\s*([A-Za-z0-9_.+-]+)',
                                                      text))
        return name in self.executables[folder]

    def missing(self, path, token):
        """Why `token`, in a comment of `path`, names no file of ours: None when it does, False
        when it is no name of ours at all."""
        t = token.rstrip('.').rstrip('/')
        segs = t.split('/')
        ext = os.path.splitext(t)[1]
        if t.startswith(('./', '../')):
            if ext not in BARE_EXT:
                return False  # a symlink's target in sysfs, a Go module's folder: not ours
            p = os.path.normpath(os.path.join(os.path.dirname(path), t))
            if p.startswith('..'):
                return 'names a file outside the repository'
            return None if self.exists(p) else 'no such file'
        if len(segs) > 1 and segs[0] in self.top:
            return None if self.exists(t) or self.built(t) else 'no such file or folder'
        if len(segs) > 1:
            if ext not in KNOWN_EXT or ext == '.c' or segs[0] not in self.dir_names:
                return False  # another project's path (net/ethtool/pause.c, pkg/utils/x.go)
            suffix = '/' + t
            return None if any(f.endswith(suffix) for f in self.files) else 'no file ends so'
        if ext in BARE_EXT and not t.startswith(('.', '_')):
            return None if t in self.base_names or self.built(t) else 'no file has this name'
        return False

    def section_missing(self, doc, words):
        """Why `words` is no section of Markdown file `doc`; None when it is, or `doc` is not
        ours (then the file check speaks)."""
        target = 'README.md' if doc == 'README' else doc
        if target not in self.files:
            matches = [f for f in self.files if os.path.basename(f) == target]
            if len(matches) != 1:
                return None
            target = matches[0]
        with open(os.path.join(self.repo, target), encoding='utf-8') as f:
            text = f.read()
        for line in text.split('\n'):
            if line.startswith('#') and words in line:
                return None
        if re.search(r'\*\*[^*\n]*' + re.escape(words) + r'[^*\n]*\*\*', text):
            return None
        return f'{target} has no heading or bold term "{words}"'


def check(repo):
    tree = Tree(repo)
    bad = []
    checked = 0
    for path in sorted(tree.files):
        if path.startswith(VERBATIM):
            continue
        for n, text in comment_lines(repo, path):
            for m in TOKEN.finditer(text):
                why = tree.missing(path, m.group(1))
                checked += why is not False
                if why:
                    bad.append(f'{path}:{n}: {m.group(1)}: {why}')
            for m in SECTION.finditer(text):
                why = tree.section_missing(m.group(1), m.group(2))
                if why:
                    bad.append(f'{path}:{n}: {m.group(0)}: {why}')
    check.names = checked
    return bad


def self_test():
    HASH = '#'  # so that this file's own scan does not take the plant below for a comment
    clean = {
        'CMakeLists.txt': '# Builds cni/ and proto/ (proto/api.pb.h from proto/api.proto).\n',
        'CONTRIBUTING.md': '# Working here\n## Seams\nSee `cni/main.cc`, [README](README.md), **Bold term** too.\n',
        'README.md': '# x\nRun `hack/run.sh`; the layout is in CONTRIBUTING.md, "Seams".\n',
        'cni/CMakeLists.txt': 'add_executable(rdmanet main.cc)\n# The binary cni/rdmanet.\n',
        'cni/main.cc': '// Thin (CONTRIBUTING.md, "Seams"; CONTRIBUTING.md, "Bold term").\n'
                       'const char* k = "cni/not_a_comment.h";  // a string is no comment\n',
        'cni/modes/mode.h': '// mode.h: see modes/mode.h, cni/modes/, ../main.cc and <infiniband/verbs.h>.\n'
                            '// https://github.com/o/r/blob/main/plugins/gone.go, /sys/class/net/x.h,\n'
                            '// tests/<file>_test.cc, cni/*.cc, ${dir}/gone.sh, net/ethtool/pause.c.\n'
                            '/* also in a block:\n * cni/main.cc\n */\n',
        'hack/run.sh': '#!/bin/sh\n# Uses ./lib.sh and ../cni/main.cc; symlinks ../../../devices/x.\n'
                       'echo "#$# hack/not_a_comment.sh"\n',
        'hack/lib.sh': '# Nothing.\n',
        'proto/api.proto': '// The API; api.pb.h is generated.\n',
        'proto/kubelet/v1/api.proto': '// Verbatim upstream: see hack/update-codegen.sh.\n',
        'manifests/values.yaml': '# Read by cni/main.cc.\n',
    }
    plants = [
        ('cni/x.cc', '// rooted: see cni/modes/gone.cc\n'),
        ('cni/y.h', '// a folder that is gone: hack/gone/\n'),
        ('cni/z.cc', '// partial: (modes/gone.h)\n'),
        ('cni/w.cc', '// bare: (gone_file.h)\n'),
        ('cni/v.cc', '// a guide no clone has (STYLE.md principle 2)\n'),
        ('cni/u.cc', '// a section that is not there (CONTRIBUTING.md, "No such section")\n'),
        ('cni/t.cc', '/* a block comment naming\n * cni/gone_in_block.h */\n'),
        ('hack/x.sh', '#!/bin/sh\n# relative: ../gone.sh\n'),
        ('hack/y.sh', '# outside the repository (../../shared/REFERENCE.md)\n'),
        ('tests/CMakeLists.txt', '# a CMake comment: tests/gone/CMakeLists.txt\n'),
        ('manifests/x.yaml', f'a: 1  {HASH} a YAML comment: manifests/gone.yaml\n'),
        ('docs.md', 'A document naming `hack/gone.sh`.\n'),
        ('cni/s.cc', '// a binary the build does not make: cni/not_built\n'),
        ('proto/x.h', '// protoc output without its .proto: proto/gone.pb.h\n'),
    ]
    with tempfile.TemporaryDirectory() as t:
        subprocess.run(['git', '-C', t, 'init', '-q'], check=True)

        def write(path, text):
            os.makedirs(os.path.join(t, os.path.dirname(path)), exist_ok=True)
            with open(os.path.join(t, path), 'w', encoding='utf-8') as f:
                f.write(text)

        for path, text in clean.items():
            write(path, text)
        bad = check(t)
        if bad:
            print('self-test: a clean tree was refused:\n' + '\n'.join(bad), file=sys.stderr)
            return 1
        failed = 0
        for path, text in plants:
            write(path, text)
            if not check(t):
                print(f'self-test: not caught: {path}: {text.strip()}', file=sys.stderr)
                failed = 1
            os.remove(os.path.join(t, path))
        if failed:
            return 1
    print(f'named_files self-test: {len(plants)} planted missing names, {len(plants)} caught; '
          'a clean tree passes')
    return 0


def main():
    if sys.argv[1:] == ['--self-test']:
        return self_test()
    repo = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..', '..')
    bad = check(repo)
    if bad:
        print('named_files: comments name files or sections that are not there:\n' +
              '\n'.join(bad), file=sys.stderr)
        return 1
    print(f'named_files: OK ({check.names} names checked)')
    return 0


if __name__ == '__main__':
    sys.exit(main())
