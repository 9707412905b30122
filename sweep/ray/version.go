package ray

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// Version is the answer of GET /api/version.
type Version struct {
	JobAPI  string `json:"version"`      // the job API's own version ("4")
	Ray     string `json:"ray_version"`  // e.g. "2.60.0"
	Commit  string `json:"ray_commit"`   // Ray's git commit
	Session string `json:"session_name"` // the cluster's current session
}

// The versions this client uses. The job API version is bumped by Ray on
// every backward-incompatible change of the REST API (4 added DELETE; 3
// added entrypoint_num_cpus and entrypoint_resources), so only 4 is
// accepted. MinRay is the oldest Ray the integration tests have run
// against: the node side also relies on behaviour outside the REST API
// (RAY_JOB_STOP_WAIT_TIME_S read by the job supervisor, driver_node_id in
// job details, gcs:// packages read from the driver through
// ray.experimental.internal_kv, the dashboard's 100 MiB request limit, the
// token authentication of 2.52+); lower it only after running those tests
// on that version.
const (
	JobAPIVersion = "4"
	MinRay        = "2.60.0"
	rayMajor      = 2
)

// Version asks the dashboard for its versions. It does not judge them (see
// CheckVersion). An answer that is not Ray's is a *NoJobAPIError.
func (c *Client) Version(ctx context.Context) (Version, error) {
	r := newRequest(http.MethodGet, "/api/version")
	resp, err := c.do(ctx, r)
	if err != nil {
		return Version{}, err
	}
	if resp.StatusCode/100 != 2 {
		err := c.statusError(resp, r.endpoint)
		if api, ok := err.(*APIError); ok {
			// The route belongs to the job module: without it (a Ray
			// without "ray[default]", or not Ray at all) it does not exist.
			return Version{}, &NoJobAPIError{Address: c.Address(), Endpoint: r.endpoint, Status: api.Status,
				Detail: fmt.Sprintf("%d %s: %s", api.Status, http.StatusText(api.Status), api.Message)}
		}
		return Version{}, err
	}
	defer resp.Body.Close()
	var v Version
	if err := decodeJSON(resp.Body, r.endpoint, &v, maxErrorBody); err != nil {
		detail := err.Error()
		if pe, ok := err.(*ProtocolError); ok {
			detail = pe.Detail
		}
		return Version{}, &NoJobAPIError{Address: c.Address(), Endpoint: r.endpoint, Status: resp.StatusCode, Detail: detail}
	}
	if v.JobAPI == "" || v.Ray == "" {
		return Version{}, &NoJobAPIError{Address: c.Address(), Endpoint: r.endpoint, Status: resp.StatusCode,
			Detail: "the answer has no \"version\" and \"ray_version\""}
	}
	return v, nil
}

// CheckVersion says whether this client can use a cluster with versions v:
// nil, or a *VersionError without Address (Preflight fills it in).
func CheckVersion(v Version) error {
	if v.JobAPI != JobAPIVersion {
		return &VersionError{Got: v, Reason: fmt.Sprintf("stratbench speaks job API %s (Ray %s or later 2.x)", JobAPIVersion, MinRay)}
	}
	got, ok := parseRayVersion(v.Ray)
	if !ok {
		return &VersionError{Got: v, Reason: fmt.Sprintf("cannot read the Ray version %q", v.Ray)}
	}
	min, _ := parseRayVersion(MinRay)
	if got[0] != rayMajor {
		return &VersionError{Got: v, Reason: fmt.Sprintf("stratbench needs Ray %d.x, %s or later", rayMajor, MinRay)}
	}
	if compareVersions(got, min) < 0 {
		return &VersionError{Got: v, Reason: fmt.Sprintf("stratbench needs Ray %s or later", MinRay)}
	}
	return nil
}

// parseRayVersion reads the numeric part of a Ray version: "2.60.0",
// "2.60.0rc1" and "3.0.0.dev0" give [2 60 0], [2 60 0], [3 0 0]. A
// pre-release compares equal to its release.
func parseRayVersion(s string) ([3]int, bool) {
	var v [3]int
	parts := strings.SplitN(s, ".", 4)
	if len(parts) < 3 {
		return v, false
	}
	for i := 0; i < 3; i++ {
		p := parts[i]
		end := 0
		for end < len(p) && p[end] >= '0' && p[end] <= '9' {
			end++
		}
		if end == 0 || (i < 2 && end != len(p)) {
			return v, false
		}
		n, err := strconv.Atoi(p[:end])
		if err != nil {
			return v, false
		}
		v[i] = n
	}
	return v, true
}

func compareVersions(a, b [3]int) int {
	for i := range a {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}
