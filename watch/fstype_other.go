//go:build !linux

package watch

// eventlessFS reports whether dir is on a filesystem without file events; it
// knows of none outside Linux.
func eventlessFS(dir string) (string, bool) { return "", false }
