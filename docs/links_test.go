package docs

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// maxReadmeLines keeps the README an entry point: what the service is, how to run and test
// it, the tour, and links; everything else belongs in a page here.
const maxReadmeLines = 250

// linkRE matches an inline markdown link or image, [text](target), capturing the target.
var linkRE = regexp.MustCompile(`\]\(([^()\s]+)\)`)

// codeSpanRE matches inline code, whose brackets are not links.
var codeSpanRE = regexp.MustCompile("`[^`]*`")

// markdown is one file's links and heading anchors, outside code blocks and code spans.
type markdown struct {
	links   []string
	anchors map[string]bool
}

func parse(t *testing.T, path string) markdown {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	md := markdown{anchors: map[string]bool{}}
	seen := map[string]int{}
	fenced := false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		if h := strings.TrimLeft(line, "#"); h != line && strings.HasPrefix(h, " ") {
			a := slug(h)
			if n := seen[a]; n > 0 {
				md.anchors[a+"-"+strconv.Itoa(n)] = true
			} else {
				md.anchors[a] = true
			}
			seen[a]++
		}
		for _, m := range linkRE.FindAllStringSubmatch(codeSpanRE.ReplaceAllString(line, ""), -1) {
			md.links = append(md.links, m[1])
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return md
}

// slug is GitHub's anchor of a heading: lower case, punctuation other than '-' and '_'
// dropped, spaces turned into '-'.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127 && isLetter(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func isLetter(r rune) bool { return strings.ToUpper(string(r)) != strings.ToLower(string(r)) }

func TestSlug(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"A five-minute tour with curl", "a-five-minute-tour-with-curl"},
		{"Locally: `backtestd sweep`", "locally-backtestd-sweep"},
		{"Roles, sign-in, tokens and audit", "roles-sign-in-tokens-and-audit"},
		{"Bounds of a request", "bounds-of-a-request"},
	} {
		if got := slug(c.in); got != c.want {
			t.Errorf("slug(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestParseFindsLinksAndAnchors(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.md")
	text := "# Title\n## Part\n## Part\nsee [a](a.md#b) and `[c](not-a-link)`\n```\n[d](in-code)\n## not a heading\n```\n![img](shot.png)\n"
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	md := parse(t, p)
	if got, want := strings.Join(md.links, " "), "a.md#b shot.png"; got != want {
		t.Errorf("links %q, want %q", got, want)
	}
	for _, a := range []string{"title", "part", "part-1"} {
		if !md.anchors[a] {
			t.Errorf("anchor %q missing from %v", a, md.anchors)
		}
	}
	if md.anchors["not-a-heading"] {
		t.Error("a heading inside a code block counted")
	}
}

// TestLinks checks that every relative link of README.md and docs/*.md names a file or
// folder of the repository and, when it has one, an anchor that a heading of that markdown
// file makes.
func TestLinks(t *testing.T) {
	pages, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	files := append([]string{filepath.Join("..", "README.md")}, pages...)
	parsed := map[string]markdown{}
	get := func(path string) markdown {
		md, ok := parsed[path]
		if !ok {
			md = parse(t, path)
			parsed[path] = md
		}
		return md
	}
	checked := 0
	for _, file := range files {
		for _, link := range get(file).links {
			if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
				continue
			}
			target, anchor, _ := strings.Cut(link, "#")
			path := file
			if target != "" {
				path = filepath.Join(filepath.Dir(file), target)
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s: link %q: %v", file, link, err)
					continue
				}
			}
			if anchor != "" && strings.HasSuffix(path, ".md") && !get(path).anchors[anchor] {
				t.Errorf("%s: link %q: no heading makes the anchor #%s in %s", file, link, anchor, path)
			}
			checked++
		}
	}
	if checked < 20 {
		t.Fatalf("only %d relative links checked: the parser no longer finds them", checked)
	}
}

func TestReadmeLength(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > maxReadmeLines {
		t.Errorf("README.md has %d lines, at most %d: move detail into a page under docs/", n, maxReadmeLines)
	}
}

// TestArchitectureListsEveryPackage keeps docs/architecture.md's package table complete:
// every package under internal/ must be named there.
func TestArchitectureListsEveryPackage(t *testing.T) {
	b, err := os.ReadFile("architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	root := filepath.Join("..", "internal")
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if d.Name() == "testdata" || d.Name() == "node_modules" {
			return filepath.SkipDir
		}
		gofiles, err := filepath.Glob(filepath.Join(path, "*.go"))
		if err != nil || len(gofiles) == 0 {
			return err
		}
		rel, err := filepath.Rel("..", path)
		if err != nil {
			return err
		}
		if name := filepath.ToSlash(rel); !strings.Contains(doc, "`"+name+"`") {
			t.Errorf("docs/architecture.md does not name the package `%s`", name)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
