package components

import (
	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"

	"stratbench/themes"
)

// HelpStyles are the help bar's and the help overlay's styles in theme th.
func HelpStyles(th themes.Theme) help.Styles {
	return help.Styles{
		Ellipsis:       th.HelpSep,
		ShortKey:       th.HelpKey,
		ShortDesc:      th.HelpDesc,
		ShortSeparator: th.HelpSep,
		FullKey:        th.HelpKey,
		FullDesc:       th.HelpDesc,
		FullSeparator:  th.HelpSep,
	}
}

// Key is a key binding: the keys that trigger it and, for the help, how
// they are written and what they do.
func Key(help, desc string, keys ...string) key.Binding {
	return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))
}
