package raytest

import (
	"strings"

	"stratbench/internal/proctest"
)

// belongsTo says whether the process is one of the cluster's: tagged, or
// naming the cluster's folder in its command line or open files.
func belongsTo(p proctest.Proc, tag, dir string) bool {
	if p.HasEnv(ClusterTagEnv + "=" + tag) {
		return true
	}
	if strings.Contains(p.Cmdline, dir) {
		return true
	}
	for _, f := range p.Files() {
		if f == dir || strings.HasPrefix(f, dir+"/") {
			return true
		}
	}
	return false
}
