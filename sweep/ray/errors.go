package ray

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// The four errors below are what Preflight (and every call) reports before
// anything is uploaded; the command line turns each into exit 2 and prints
// its message, which names which of them it is.

// UnreachableError: nothing answered HTTP at the address (connection refused,
// no route, DNS failure, a timeout before any response), or a proxy in front
// of the dashboard answered that the dashboard behind it is down (502, 503,
// 504).
type UnreachableError struct {
	Address  string // the dashboard address, e.g. http://10.0.0.5:8265
	Endpoint string // the request that failed, e.g. "GET /api/version"
	Err      error  // the transport's error, or the proxy's status
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("ray: no Ray dashboard answers at %s (%s: %v); check the address and that the head node's dashboard port is reachable",
		e.Address, e.Endpoint, e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// NoJobAPIError: a server answered, but not as a Ray dashboard with the job
// API: a Ray installed without "ray[default]" (no job module), a dashboard
// started without it, or some other HTTP server.
type NoJobAPIError struct {
	Address  string
	Endpoint string
	Status   int    // the HTTP status received (200 when the body was not Ray's)
	Detail   string // what was wrong with the answer
}

func (e *NoJobAPIError) Error() string {
	return fmt.Sprintf(`ray: %s answers HTTP but not with the Ray job API (%s: %s); the cluster needs "ray[default]" and its dashboard port (8265 by default)`,
		e.Address, e.Endpoint, e.Detail)
}

// VersionError: the cluster runs a Ray, or a job API, that this stratbench
// cannot use.
type VersionError struct {
	Address string
	Got     Version
	Reason  string
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("ray: the cluster at %s runs Ray %s (job API %s), which stratbench cannot use: %s",
		e.Address, orUnknown(e.Got.Ray), orUnknown(e.Got.JobAPI), e.Reason)
}

// AuthError: the cluster requires a token (Ray's token authentication,
// RAY_AUTH_MODE=token) that was not found or was refused (401 or 403).
type AuthError struct {
	Address  string
	Endpoint string
	Status   int
	Message  string      // Ray's message (the token, were it in it, removed)
	Source   TokenSource // where the token sent came from (TokenNone: none was)
}

func (e *AuthError) Error() string {
	if e.Source.Kind == TokenNone {
		return fmt.Sprintf("ray: the cluster at %s uses token authentication and stratbench found no token (%s: %d %s); "+
			"give it as Ray's own tools take it: in $%s, in a file named by $%s, or in %s",
			e.Address, e.Endpoint, e.Status, e.Message, TokenEnv, TokenPathEnv, DefaultTokenFile("~"))
	}
	return fmt.Sprintf("ray: the cluster at %s refused the token from %s (%s: %d %s)",
		e.Address, e.Source, e.Endpoint, e.Status, e.Message)
}

// ErrNotFound matches (with errors.Is) an APIError whose status is 404: the
// job or package does not exist.
var ErrNotFound = errors.New("not found")

// ErrAlreadyExists matches (with errors.Is) Ray's refusal of a submission
// whose id is already taken: a submission retried after a lost answer finds
// its job there.
var ErrAlreadyExists = errors.New("already exists")

// APIError: Ray answered a request with an error status. Message is Ray's
// own message: the last line of the Python traceback Ray sends as the body,
// or the body itself.
type APIError struct {
	Endpoint string // e.g. "POST /api/jobs/"
	Status   int
	Message  string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("ray: %s: %d: %s", e.Endpoint, e.Status, e.Message)
}

// Is makes errors.Is(err, ErrNotFound) true for a 404, and errors.Is(err,
// ErrAlreadyExists) true for Ray's "Job with submission_id … already
// exists" (which the head answers as a 500: it relays its agent's 400).
func (e *APIError) Is(target error) bool {
	switch target {
	case ErrNotFound:
		return e.Status == 404
	case ErrAlreadyExists:
		return strings.Contains(e.Message, "Job with submission_id") && strings.Contains(e.Message, "already exists")
	}
	return false
}

// ProtocolError: Ray answered with a success status but a body this client
// cannot read (not the JSON the endpoint documents, or too large).
type ProtocolError struct {
	Endpoint string
	Detail   string
}

func (e *ProtocolError) Error() string {
	return fmt.Sprintf("ray: %s: unexpected answer: %s", e.Endpoint, e.Detail)
}

// maxMessageBytes bounds the message kept from an error body: Ray's bodies
// are whole Python tracebacks, sometimes nested (the head wraps the node
// agent's traceback in its own).
const maxMessageBytes = 500

// rayMessage extracts Ray's message from an error body. The job module
// answers errors with traceback.format_exc(), whose last exception line is
// the message ("ValueError: Job with submission_id x already exists.
// ..."). When the head relays an error of a node's agent, the agent's
// traceback is inside the head's ("RuntimeError: Request failed with status
// code 500: Traceback ... RuntimeError: Attempted to delete job ..." then a
// line with a lone "."): the last exception line is still the one that
// says what happened. Other errors are a plain line ("Job x does not
// exist").
func rayMessage(body []byte) string {
	text := strings.TrimSpace(strings.ToValidUTF8(string(body), "\uFFFD"))
	if strings.Contains(text, "Traceback (most recent call last):") {
		lines := strings.Split(text, "\n")
		for i := len(lines) - 1; i >= 0; i-- {
			if line := strings.TrimSpace(lines[i]); exceptionLine.MatchString(line) {
				text = line
				break
			}
		}
	}
	text = strings.Join(strings.Fields(text), " ")
	if text == "" {
		return "(empty body)"
	}
	return truncateUTF8(text, maxMessageBytes)
}

// exceptionLine is the last line of a Python traceback: the exception's
// (dotted) name, a colon, its message.
var exceptionLine = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.]*: \S`)

// truncateUTF8 cuts s to at most n bytes without splitting a character, and
// marks the cut.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}
