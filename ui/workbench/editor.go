package workbench

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"

	"stratbench/themes"
)

// editorDoneMsg reports that the editor exited.
type editorDoneMsg struct {
	err    error
	notice string // what the user should know, such as a line not passed
}

// errNoEditor is returned when no editor is set.
var errNoEditor = errors.New("no editor")

// editorCommand builds the command that opens file at line. editor is a
// template with {file} and {line} (STRATBENCH_EDITOR: "myeditor --line
// {line} {file}"), or a command that may carry arguments ($VISUAL,
// $EDITOR), whose line syntax is known for the common editors. A line of 0
// opens the file without a position (a template gets line 1). lineLost
// reports an editor that got no line because its syntax is not known.
func editorCommand(editor, file string, line int) (cmd *exec.Cmd, lineLost bool, err error) {
	fields, err := splitCommand(editor)
	if err != nil {
		return nil, false, fmt.Errorf("editor %q: %w", editor, err)
	}
	if len(fields) == 0 {
		return nil, false, errNoEditor
	}
	if isTemplate(editor) {
		n := strconv.Itoa(max(line, 1))
		hasFile := false
		args := make([]string, 0, len(fields))
		for _, f := range fields {
			hasFile = hasFile || strings.Contains(f, "{file}")
			args = append(args, strings.NewReplacer("{file}", file, "{line}", n).Replace(f))
		}
		if !hasFile {
			args = append(args, file)
		}
		return exec.Command(args[0], args[1:]...), false, nil
	}
	args := fields[1:]
	switch name := strings.TrimSuffix(filepath.Base(fields[0]), ".exe"); {
	case line <= 0:
		args = append(args, file)
	case name == "code" || name == "code-insiders" || name == "codium" || name == "cursor":
		args = append(args, "-g", fmt.Sprintf("%s:%d", file, line))
	case name == "subl" || name == "sublime_text" || name == "zed" || name == "zeditor":
		args = append(args, fmt.Sprintf("%s:%d", file, line))
	case isPlusLineEditor(name):
		args = append(args, fmt.Sprintf("+%d", line), file)
	default:
		args = append(args, file)
		lineLost = true
	}
	return exec.Command(fields[0], args...), lineLost, nil
}

// isTemplate reports whether an editor setting is a template.
func isTemplate(editor string) bool {
	return strings.Contains(editor, "{file}") || strings.Contains(editor, "{line}")
}

// isPlusLineEditor reports whether an editor takes +LINE before the file.
func isPlusLineEditor(name string) bool {
	switch name {
	case "vi", "vim", "nvim", "gvim", "view", "nano", "emacs", "emacsclient", "micro", "hx", "helix", "kak", "joe", "jed", "ne", "mg":
		return true
	}
	return false
}

// splitCommand splits an editor setting into words as a shell would for
// the simple cases: blanks separate words, single and double quotes keep
// them together, a backslash escapes the next character outside single
// quotes. Nothing is expanded.
func splitCommand(s string) ([]string, error) {
	var (
		words   []string
		cur     strings.Builder
		inWord  bool
		quote   rune
		escaped bool
	)
	for _, r := range s {
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped = false
		case r == '\\' && quote != '\'':
			escaped, inWord = true, true
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 || escaped {
		return nil, errors.New("unbalanced quote")
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// edit opens the editor at the failure pane's selected frame (the failing
// line of the strategy, the last frame of its own files, unless [ or ]
// chose another) in the shown job's failure, or the top of the strategy
// when nothing failed.
func (m *model) edit() tea.Cmd {
	file, line := m.opts.Strategy, 0
	if fr, ok := m.view().failure.selected(); ok {
		file, line = fr.File, fr.Line
	}
	return m.editAt(file, line)
}

// editAt opens the editor at file's line (0: no line).
func (m *model) editAt(file string, line int) tea.Cmd {
	cmd, lineLost, err := editorCommand(m.opts.Editor, file, line)
	if errors.Is(err, errNoEditor) {
		m.setFlash("set $VISUAL or $EDITOR (or STRATBENCH_EDITOR='myeditor --line {line} {file}') to open "+displayName(file)+" from here", themes.LevelWarn)
		return nil
	}
	if err != nil {
		m.setFlash(err.Error(), themes.LevelFail)
		return nil
	}
	var notice string
	if lineLost {
		notice = fmt.Sprintf("%s opened %s without the line (%d): its line syntax is not known; set STRATBENCH_EDITOR='%s --line {line} {file}' (your editor's syntax)",
			filepath.Base(cmd.Args[0]), displayName(file), line, filepath.Base(cmd.Args[0]))
	}
	return tea.ExecProcess(cmd, func(err error) tea.Msg {
		if err != nil {
			err = fmt.Errorf("%s: %w", cmd.Path, err)
		}
		return editorDoneMsg{err: err, notice: notice}
	})
}

// EditorSetting is the editor e opens (Options.Editor): STRATBENCH_EDITOR
// (a template with {file} and {line}), then $VISUAL, then $EDITOR, as
// terminal tools take them, read with getenv.
func EditorSetting(getenv func(string) string) string {
	for _, name := range []string{"STRATBENCH_EDITOR", "VISUAL", "EDITOR"} {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			return v
		}
	}
	return ""
}
