package ray

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"golang.org/x/net/websocket"
)

// A job's log is the entrypoint's stdout and stderr, preceded by a few lines
// of Ray's own ("Runtime env is setting up.", "Running entrypoint for job
// ID: COMMAND"). Ray keeps it in a file on the node that runs the
// entrypoint and serves it two ways: GET /api/jobs/{id}/logs answers the
// whole file at once, and GET /api/jobs/{id}/logs/tail (a WebSocket) sends
// it from its beginning in chunks, then follows it, and closes once the job
// is terminal and everything was sent. Neither takes an offset: offsets are
// kept here, by LogCursor, in bytes of complete lines.

// Logs returns a job's whole log.
func (c *Client) Logs(ctx context.Context, id string) (string, error) {
	var out struct {
		Logs string `json:"logs"`
	}
	err := c.call(ctx, newRequest(http.MethodGet, "/api/jobs/"+pathSegment(id)+"/logs"), &out, maxLogsResponse)
	return out.Logs, err
}

// LogCursor reads a job's log as complete lines, remembering how far it
// got. The zero value starts at the beginning.
type LogCursor struct {
	// Offset is the number of bytes of the log consumed: always the end of
	// a complete line (or the end of the log once the job is terminal).
	Offset int64
	// Lines is the number of lines consumed.
	Lines int64
	// pending is the part of the stream past Offset not yet ending in a
	// newline (a line Ray was still writing).
	pending string
	// seen counts the bytes of the current stream (one tail connection,
	// or one GET) received so far, to skip what Offset already covers.
	seen int64
}

// ErrLogShrank: the log is shorter than what was already read from it.
var ErrLogShrank = errors.New("ray: the job's log is shorter than what was already read; it was replaced")

// restart prepares the cursor for a stream that starts again from the
// beginning of the log (a new tail connection, a new GET).
func (c *LogCursor) restart() {
	c.pending = ""
	c.seen = 0
}

// feed takes the next chunk of the current stream and calls fn with each
// complete line past Offset (without its newline). It stops at fn's first
// error.
func (c *LogCursor) feed(chunk string, fn func(line string) error) error {
	start := c.seen
	c.seen += int64(len(chunk))
	if c.seen <= c.Offset {
		return nil // all of it was read before
	}
	if start < c.Offset {
		chunk = chunk[c.Offset-start:]
	}
	c.pending += chunk
	for {
		i := strings.IndexByte(c.pending, '\n')
		if i < 0 {
			return nil
		}
		line := c.pending[:i]
		c.pending = c.pending[i+1:]
		c.Offset += int64(i + 1)
		c.Lines++
		if err := fn(strings.TrimSuffix(line, "\r")); err != nil {
			return err
		}
	}
}

// finish ends a stream that was the whole log: it checks the log did not
// shrink, and when final (the job is terminal, so nothing more will be
// written) delivers a last line without a newline.
func (c *LogCursor) finish(final bool, fn func(line string) error) error {
	if c.seen < c.Offset {
		return ErrLogShrank
	}
	if !final || c.pending == "" {
		return nil
	}
	line := c.pending
	c.pending = ""
	c.Offset += int64(len(line))
	c.Lines++
	return fn(strings.TrimSuffix(line, "\r"))
}

// ReadLogs gets the job's whole log once (GET …/logs) and calls fn with
// each complete line past the cursor. With final (the caller saw the job
// terminal before the call), a last line without a newline counts too.
func (c *Client) ReadLogs(ctx context.Context, id string, cur *LogCursor, final bool, fn func(line string) error) error {
	text, err := c.Logs(ctx, id)
	if err != nil {
		return err
	}
	cur.restart()
	if err := cur.feed(text, fn); err != nil {
		return err
	}
	return cur.finish(final, fn)
}

// TailLogs follows the job's log through Ray's WebSocket (GET …/logs/tail)
// and calls fn with each complete line past the cursor, as Ray sends it. It
// returns nil when Ray closes the stream, which it does once the job is
// terminal and its log was sent, but also when the head loses the node
// that holds the log; a last line without a newline is left for ReadLogs.
// A dropped connection is an *UnreachableError. Calling TailLogs again
// with the same cursor resumes without repeating a line.
func (c *Client) TailLogs(ctx context.Context, id string, cur *LogCursor, fn func(line string) error) error {
	endpoint := "GET /api/jobs/" + id + "/logs/tail"
	ws, err := c.dialTail(ctx, id)
	if err != nil {
		return err
	}
	// The connection's owner is this call: closing it ends the receive
	// below when the context ends first.
	stop := context.AfterFunc(ctx, func() { ws.Close() })
	defer func() {
		stop()
		ws.Close()
	}()
	ws.MaxPayloadBytes = maxTailFrame
	cur.restart()
	for {
		var chunk string
		err := websocket.Message.Receive(ws, &chunk)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return fmt.Errorf("ray: %s: %w", endpoint, ctxErr)
			}
			return &UnreachableError{Address: c.Address(), Endpoint: endpoint, Err: err}
		}
		if err := cur.feed(chunk, fn); err != nil {
			return err
		}
	}
}

// maxTailFrame bounds one frame of the tail stream. Ray sends at most 10
// lines, or lines up to about 20,000 characters, per frame; a single longer
// line comes whole.
const maxTailFrame = 64 << 20

func (c *Client) dialTail(ctx context.Context, id string) (*websocket.Conn, error) {
	endpoint := "GET /api/jobs/" + id + "/logs/tail"
	u := *c.base
	if u.Scheme == "https" {
		u.Scheme = "wss"
	} else {
		u.Scheme = "ws"
	}
	cfg, err := websocket.NewConfig(u.String()+"/api/jobs/"+pathSegment(id)+"/logs/tail", c.base.String())
	if err != nil {
		return nil, fmt.Errorf("ray: %s: %w", endpoint, err)
	}
	c.authorize(cfg.Header)
	cfg.Dialer = newTailDialer()
	ws, err := cfg.DialContext(ctx)
	if err == nil {
		return ws, nil
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return nil, fmt.Errorf("ray: %s: %w", endpoint, ctxErr)
	}
	// Ray answers a job that does not exist with a plain 404 instead of
	// the upgrade: x/net/websocket reports it as a bad status. Ask the job
	// itself to tell a missing job from a broken stream.
	if _, jerr := c.Job(ctx, id); jerr != nil {
		return nil, jerr
	}
	return nil, &UnreachableError{Address: c.Address(), Endpoint: endpoint, Err: err}
}

// Follow delivers every line of the job's log past the cursor, in order and
// exactly once, until the job is terminal and its log fully read, or ctx
// ends. It tails the log; when the stream ends or drops while the job is
// not terminal (a dashboard restart, a proxy's idle timeout, a lost
// connection), it connects again after retry and resumes at the cursor.
// Once the job is terminal it reads the whole log once more (GET …/logs):
// the file is the reference, so a stream that ended early loses nothing.
func (c *Client) Follow(ctx context.Context, id string, cur *LogCursor, retry time.Duration, fn func(line string) error) error {
	failures := 0
	for {
		err := c.TailLogs(ctx, id, cur, fn)
		var job JobInfo
		if err == nil {
			job, err = c.Job(ctx, id)
		}
		var unreachable *UnreachableError
		switch {
		case err == nil && job.Status.Terminal():
			return c.ReadLogs(ctx, id, cur, true, fn)
		case err == nil:
			failures = 0 // a clean end before the job's: start again
		case errors.As(err, &unreachable):
			failures++
			if failures > maxFollowRetries {
				return fmt.Errorf("ray: following job %s: %d attempts in a row failed, the last: %w", id, failures, err)
			}
		default:
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("ray: following job %s: %w", id, ctx.Err())
		case <-time.After(retry):
		}
	}
}

// maxFollowRetries bounds the failed attempts in a row of one Follow.
const maxFollowRetries = 20

func newTailDialer() *net.Dialer { return &net.Dialer{Timeout: DialTimeout} }
