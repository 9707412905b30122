// Package doclinks checks the links of the project's Markdown pages: every
// relative link or image names a file or folder that exists, and every
// anchor (`#…`, alone or after a page) names a heading of that page, as
// GitHub makes anchors from headings (Slug). Links to other sites are not
// followed.
package doclinks

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"
)

// Problem is a link that does not resolve.
type Problem struct {
	File   string // the page, relative to the root given to Check
	Line   int    // 1-based
	Link   string // the link's target as written
	Reason string
}

func (p Problem) String() string {
	return fmt.Sprintf("%s:%d: %s: %s", p.File, p.Line, p.Link, p.Reason)
}

var (
	// An inline link or image: [text](target "title"); the target may be
	// in angle brackets.
	inlineLink = regexp.MustCompile(`!?\[[^\]]*\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)`)
	// A reference definition: [label]: target
	referenceDef = regexp.MustCompile(`^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)`)
	// href="…" or src="…" of an HTML tag.
	htmlLink = regexp.MustCompile(`<(?:a|img)\b[^>]*?\b(?:href|src)\s*=\s*"([^"]*)"`)
	// An explicit anchor: <a id="…"> or <a name="…">.
	htmlAnchor = regexp.MustCompile(`<a\b[^>]*?\b(?:id|name)\s*=\s*"([^"]*)"`)
	// A URI scheme (https:, mailto:): a link to somewhere else.
	scheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)
	// An ATX heading: up to three spaces, 1 to 6 #, then its text.
	atxHeading = regexp.MustCompile(`^ {0,3}#{1,6}(?:[ \t]+(.*?))?[ \t]*$`)
	// A closing sequence of #s after a heading's text.
	atxClose = regexp.MustCompile(`(?:^|[ \t]+)#+$`)
	// The underline of a setext heading.
	setextLine = regexp.MustCompile(`^ {0,3}(?:=+|-+)[ \t]*$`)
	// A fence that opens or closes a code block.
	fence = regexp.MustCompile("^ {0,3}(```+|~~~+)")
	// Markup a heading's anchor leaves out: images and links keep their
	// text, HTML tags go, emphasis marks go.
	headingImage = regexp.MustCompile(`!\[([^\]]*)\]\([^)]*\)`)
	headingLink  = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	htmlTag      = regexp.MustCompile(`<[^>]+>`)
)

// Check reads the Markdown pages files (paths relative to root, with
// slashes) and returns every relative link among them that does not
// resolve, in the order found.
func Check(root string, files []string) ([]Problem, error) {
	pages := map[string]*page{}
	load := func(name string) (*page, error) {
		if p, ok := pages[name]; ok {
			return p, nil
		}
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
		if err != nil {
			return nil, err
		}
		p := parse(string(b))
		pages[name] = p
		return p, nil
	}
	var problems []Problem
	for _, name := range files {
		p, err := load(name)
		if err != nil {
			return nil, fmt.Errorf("doclinks: %w", err)
		}
		for _, l := range p.links {
			target, anchor, _ := strings.Cut(l.target, "#")
			bad := func(reason string) {
				problems = append(problems, Problem{File: name, Line: l.line, Link: l.target, Reason: reason})
			}
			dest := name
			if target != "" {
				dest = path.Join(path.Dir(name), target)
				if dest == ".." || strings.HasPrefix(dest, "../") {
					bad("points outside the repository")
					continue
				}
				info, err := os.Stat(filepath.Join(root, filepath.FromSlash(dest)))
				if err != nil {
					bad("no such file or folder")
					continue
				}
				if info.IsDir() || anchor == "" {
					continue
				}
			}
			if anchor == "" {
				continue
			}
			if !strings.HasSuffix(dest, ".md") {
				bad("an anchor into a file that is not Markdown")
				continue
			}
			q, err := load(dest)
			if err != nil {
				return nil, fmt.Errorf("doclinks: %w", err)
			}
			if !q.anchors[strings.ToLower(anchor)] {
				bad(fmt.Sprintf("%s has no heading with the anchor #%s", dest, anchor))
			}
		}
	}
	return problems, nil
}

type link struct {
	line   int
	target string
}

type page struct {
	links   []link
	anchors map[string]bool
}

// parse finds a page's relative links and its anchors, outside code blocks
// and code spans.
func parse(text string) *page {
	p := &page{anchors: map[string]bool{}}
	seen := map[string]int{}
	addHeading := func(h string) {
		slug := Slug(h)
		unique := slug
		for n := seen[slug]; ; n++ {
			if n > 0 {
				unique = fmt.Sprintf("%s-%d", slug, n)
			}
			if !p.anchors[unique] {
				seen[slug] = n + 1
				break
			}
		}
		p.anchors[unique] = true
	}
	lines := strings.Split(text, "\n")
	var open string // the fence of the code block we are in
	prev := ""      // the previous line, when it could start a setext heading
	for i, line := range lines {
		line = strings.TrimRight(line, "\r")
		if m := fence.FindStringSubmatch(line); m != nil {
			switch {
			case open == "":
				open = m[1]
			case m[1][0] == open[0] && len(m[1]) >= len(open):
				open = ""
			}
			prev = ""
			continue
		}
		if open != "" {
			continue
		}
		if m := atxHeading.FindStringSubmatch(line); m != nil {
			addHeading(atxClose.ReplaceAllString(m[1], ""))
			prev = ""
		} else if setextLine.MatchString(line) && prev != "" {
			addHeading(prev)
			prev = ""
		} else if strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "|") {
			prev = ""
		} else {
			prev = strings.TrimSpace(line)
		}
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			p.anchors[strings.ToLower(m[1])] = true
		}
		plain := codeSpans(line, false)
		var targets []string
		for _, m := range inlineLink.FindAllStringSubmatch(plain, -1) {
			targets = append(targets, m[1])
		}
		if m := referenceDef.FindStringSubmatch(plain); m != nil {
			targets = append(targets, m[1])
		}
		for _, m := range htmlLink.FindAllStringSubmatch(plain, -1) {
			targets = append(targets, m[1])
		}
		for _, t := range targets {
			t = strings.TrimSuffix(strings.TrimPrefix(t, "<"), ">")
			if t == "" || scheme.MatchString(t) || strings.HasPrefix(t, "//") {
				continue
			}
			p.links = append(p.links, link{line: i + 1, target: t})
		}
	}
	return p
}

// Slug is the anchor GitHub gives a heading: the heading's text as shown
// (code spans keep their text, links and images their text, HTML tags and
// emphasis marks go), in lower case, without any character but letters,
// digits, marks, '_', '-' and spaces, each space a '-'. A page's second
// heading of the same slug gets "-1", the third "-2" (parse does that).
func Slug(heading string) string {
	heading = codeSpans(heading, true)
	heading = headingImage.ReplaceAllString(heading, "$1")
	heading = headingLink.ReplaceAllString(heading, "$1")
	heading = htmlTag.ReplaceAllString(heading, "")
	heading = strings.ReplaceAll(heading, "*", "")
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// codeSpans returns line with its code spans (a run of backticks, text, a
// run of as many) replaced by their text (keep) or removed. A run without
// its closing run is left as it is.
func codeSpans(line string, keep bool) string {
	var b strings.Builder
	for {
		start := strings.IndexByte(line, '`')
		if start < 0 {
			b.WriteString(line)
			return b.String()
		}
		n := start
		for n < len(line) && line[n] == '`' {
			n++
		}
		run := line[start:n]
		end := -1
		for i := n; i < len(line); {
			j := strings.Index(line[i:], run)
			if j < 0 {
				break
			}
			j += i
			k := j + len(run)
			if k == len(line) || line[k] != '`' {
				if j == 0 || line[j-1] != '`' {
					end = j
					break
				}
			}
			for k < len(line) && line[k] == '`' {
				k++
			}
			i = k
		}
		if end < 0 {
			b.WriteString(line[:n])
			line = line[n:]
			continue
		}
		b.WriteString(line[:start])
		if keep {
			b.WriteString(line[n:end])
		}
		line = line[end+len(run):]
	}
}
