package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"stratbench/internal/atomicfile"
	"stratbench/internal/units"
	"stratbench/job"
)

// reserveBytes is the disk space a job takes at its start for its final
// report, so that a disk that fills during the run still takes the report:
// a report is 2 to 10 KiB, up to some 100 KiB with a long traceback; one
// that does not fit (a large on_finish result) is saved without its
// metadata and traceback when the disk is full, and says so.
const reserveBytes = 256 << 10

// reserveFile is the reserve's name in the job folder.
const reserveFile = ".report-reserve"

// reserve is disk space allocated at job start and given back when the final
// report is written: the report is written into it and the file renamed to
// job.json, which needs no free space.
type reserve struct {
	f    *os.File
	path string
}

// makeReserve allocates the reserve in dir.
func makeReserve(dir string) (*reserve, error) {
	path := filepath.Join(dir, reserveFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("reserve room for the final report: %w", err)
	}
	err = unix.Fallocate(int(f.Fd()), 0, 0, reserveBytes)
	if errors.Is(err, unix.EOPNOTSUPP) {
		// Without fallocate, zeros take the blocks just as well.
		_, err = f.Write(make([]byte, reserveBytes))
	}
	if err == nil {
		err = f.Chmod(0o644) // whatever the umask: job.json is readable
	}
	if err != nil {
		f.Close()
		os.Remove(path)
		return nil, fmt.Errorf("reserve room for the final report: %w", &os.PathError{Op: "allocate", Path: path, Err: err})
	}
	return &reserve{f: f, path: path}, nil
}

// replace writes data as path through the reserve: the data overwrites
// blocks the reserve holds, the rest is freed and the file renamed to path
// (atomically, as atomicfile.WriteFile). The reserve is used up either way.
func (r *reserve) replace(path string, data []byte) error {
	defer r.release()
	if len(data) > reserveBytes {
		return fmt.Errorf("write %s: %d bytes do not fit the %s kept for it", path, len(data), units.Bytes(reserveBytes))
	}
	_, err := r.f.WriteAt(data, 0)
	if err == nil {
		err = r.f.Truncate(int64(len(data)))
	}
	if err == nil {
		err = r.f.Sync()
	}
	if cerr := r.f.Close(); err == nil {
		err = cerr
	}
	r.f = nil
	if err == nil {
		err = os.Rename(r.path, path)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// release gives the reserve back to the disk; it may be called again.
func (r *reserve) release() {
	if r.f != nil {
		r.f.Close()
		r.f = nil
	}
	os.Remove(r.path)
}

// saveReport writes the final report as job.json in dir. With the reserve,
// a report that fits in it is written there: that needs no free space. A
// larger one is written as usual, and when that fails, a slimmed copy
// (without metadata and traceback, saying so in save_errors) goes through
// the reserve; rep then says the same. The reserve is used up either way.
func saveReport(dir string, rep *job.Report, res *reserve) error {
	path := filepath.Join(dir, "job.json")
	data, err := encodeReport(rep)
	if err != nil {
		if res != nil {
			res.release()
		}
		return err
	}
	if res != nil && len(data) <= reserveBytes {
		return res.replace(path, data)
	}
	err = atomicfile.WriteFile(path, data, 0o644, atomicfile.Durable)
	if err == nil || res == nil {
		if res != nil {
			res.release()
		}
		return err
	}
	note := fmt.Sprintf("%s saved without metadata and traceback (%s), which did not fit: %v", path, units.Bytes(int64(len(data))), err)
	slim := *rep
	slim.Metadata = json.RawMessage("null")
	if rep.Failure != nil {
		f := *rep.Failure
		f.Traceback, f.Frames = "", nil
		slim.Failure = &f
	}
	slim.SaveErrors = append(append([]string(nil), rep.SaveErrors...), note)
	data, err = encodeReport(&slim)
	if err == nil {
		err = res.replace(path, data)
	} else {
		res.release()
	}
	if err != nil {
		return err
	}
	rep.SaveErrors = append(rep.SaveErrors, note)
	return nil
}

func encodeReport(rep *job.Report) ([]byte, error) {
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode job.json: %w", err)
	}
	return append(data, '\n'), nil
}
