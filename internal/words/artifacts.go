package words

import (
	"fmt"

	"stratbench/internal/units"
	"stratbench/job"
)

// ArtifactsSummary is the line above a job's artifacts: how many files,
// how much, and the caps on the strategy's files beside it: "3 files ·
// 2.10 MiB · cap 2.00 GiB, 1.00 GiB a file".
func ArtifactsSummary(a job.Artifacts) string {
	n := len(a.Files) + a.Unlisted
	files := "no files"
	switch {
	case n == 1:
		files = "1 file"
	case n > 1:
		files = units.Count(n) + " files"
	}
	size := units.Bytes(a.Bytes)
	// What the cap counts, where it is not the sizes rounded to blocks:
	// holes, or blocks allocated past a file's end.
	// (0: a listing of an older version, which did not count it.)
	if slack := int64(n+1) * 4096; a.DiskBytes > 0 && (a.DiskBytes > a.Bytes+slack || a.DiskBytes < a.Bytes-slack) {
		size += " (" + units.Bytes(a.DiskBytes) + " on disk)"
	}
	return fmt.Sprintf("%s · %s · cap %s, %s a file", files, size,
		units.Bytes(a.CapBytes), units.Bytes(a.FileCapBytes))
}

// Unlisted says how many files a listing leaves out: "… and 9 more files".
func Unlisted(n int) string {
	if n == 1 {
		return "… and 1 more file"
	}
	return "… and " + units.Count(n) + " more files"
}
