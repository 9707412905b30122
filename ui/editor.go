package ui

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"

	tea "charm.land/bubbletea/v2"

	"stratbench/themes"
)

// editorDoneMsg reports that the editor exited.
type editorDoneMsg struct{ err error }

// errNoEditor is returned when $EDITOR is not set.
var errNoEditor = errors.New("no editor")

// editorCommand builds the command that opens file at line in editor (the
// value of $EDITOR, which may carry arguments). A line of 0 opens the file
// without a position.
func editorCommand(editor, file string, line int) (*exec.Cmd, error) {
	fields := strings.Fields(editor)
	if len(fields) == 0 {
		return nil, errNoEditor
	}
	args := fields[1:]
	switch name := strings.TrimSuffix(filepath.Base(fields[0]), ".exe"); {
	case line <= 0:
		args = append(args, file)
	case name == "code" || name == "code-insiders" || name == "codium":
		args = append(args, "-g", fmt.Sprintf("%s:%d", file, line))
	case isPlusLineEditor(name):
		args = append(args, fmt.Sprintf("+%d", line), file)
	default:
		args = append(args, file)
	}
	return exec.Command(fields[0], args...), nil
}

// isPlusLineEditor reports whether an editor takes +LINE before the file.
func isPlusLineEditor(name string) bool {
	switch name {
	case "vi", "vim", "nvim", "gvim", "view", "nano", "emacs", "emacsclient", "micro", "hx", "helix", "kak":
		return true
	}
	return false
}

// edit opens $EDITOR at the failing line of the strategy: the last frame of
// the strategy's own files in the shown job's failure, or the top of the
// strategy when nothing failed.
func (m *model) edit() tea.Cmd {
	file, line := m.opts.Strategy, 0
	if fr, ok := failingFrame(m.view().failure.failure); ok {
		file, line = fr.File, fr.Line
	}
	cmd, err := editorCommand(m.opts.Editor, file, line)
	if errors.Is(err, errNoEditor) {
		m.setFlash("set $EDITOR to open "+displayName(file)+" from here", themes.LevelWarn)
		return nil
	}
	if err != nil {
		m.setFlash(err.Error(), themes.LevelFail)
		return nil
	}
	return tea.ExecProcess(cmd, func(err error) tea.Msg {
		if err != nil {
			err = fmt.Errorf("%s: %w", cmd.Path, err)
		}
		return editorDoneMsg{err}
	})
}
