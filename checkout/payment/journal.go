package payment

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// journalFile is the journal's name in Config.DataDir.
const journalFile = "journal.jsonl"

// The kinds of journal lines.
const (
	opCharge = "charge" // a charge was decided: approved, declined or voided
	opVoid   = "void"   // a void changed the books: a charge voided, or a tombstone left
)

// record is one line of the journal: one change to the books. Lines are in
// the order the changes were made.
type record struct {
	Op string `json:"op"`
	// Charge is, for "charge", the charge as it was recorded and answered.
	Charge *Charge `json:"charge,omitempty"`
	// Key and At are, for "void", the key voided and when.
	Key string    `json:"key,omitempty"`
	At  time.Time `json:"at,omitzero"`
}

// JournalError reports a line of the journal in Config.DataDir that cannot be
// replayed. The books cannot be trusted past it, so NewServer refuses to
// start rather than answer from a part of them.
type JournalError struct {
	// File is the journal's path.
	File string
	// Line is the line's number, from 1.
	Line int
	// Err says what is wrong with the line.
	Err error
}

// Error implements error.
func (e *JournalError) Error() string {
	return fmt.Sprintf("replay payment journal %s: line %d: %v (repair the line, or move the file away to start with empty books)", e.File, e.Line, e.Err)
}

// Unwrap returns what is wrong with the line.
func (e *JournalError) Unwrap() error { return e.Err }

// journal appends the changes to the books to a file. Its methods are called
// with Server.mu held: that orders the lines as the changes were made, and
// makes a change visible to other requests only once it is written, so that
// nothing is answered from the books that a restart would not find there.
type journal struct {
	path string
	f    *os.File // opened with O_APPEND: every write lands at the end
	sync bool     // Config.Sync
	size int64    // length of the whole lines written: where the next one starts
	err  error    // once set, every write fails with it
}

// append writes r as one line. When it returns an error the change must not
// be made nor answered: it may or may not be in the file, but the file ends
// with whole lines either way (or the journal refuses every later write).
//
// Without Sync the line is only in the kernel's page cache when append
// returns. That is enough for what a drill does to the stand-in: a killed
// process loses nothing it wrote, only a crash of the machine does.
func (j *journal) append(r record) error {
	if j.err != nil {
		return j.err
	}
	b, err := json.Marshal(r)
	if err != nil { // only plain structs are written: cannot happen
		return fmt.Errorf("encode journal line: %w", err)
	}
	// One write per line, newline included: a process killed mid-write
	// leaves at most a torn last line, whose answer was never sent.
	n, err := j.f.Write(append(b, '\n'))
	if err == nil && j.sync {
		if err = j.f.Sync(); err != nil {
			// After a failed fsync the kernel may have dropped the pages,
			// and a later fsync can succeed without them: no later line
			// could be trusted to be on the disk.
			j.err = fmt.Errorf("journal %s unusable after a failed flush: %w", j.path, err)
		}
	}
	if err != nil {
		// A partial line left behind would glue itself to the next one and
		// corrupt the middle of the file: cut it off, or stop writing.
		if terr := j.f.Truncate(j.size); terr != nil && j.err == nil {
			j.err = fmt.Errorf("journal %s unusable after a failed write (%v) and a failed truncate: %w", j.path, err, terr)
		}
		return fmt.Errorf("write journal %s: %w", j.path, err)
	}
	j.size += int64(n)
	return nil
}

// close closes the file; every later write fails.
func (j *journal) close() error {
	if j.f == nil {
		return nil
	}
	err := j.f.Close()
	j.f = nil
	j.err = fmt.Errorf("journal %s: %w", j.path, os.ErrClosed)
	if err != nil {
		return fmt.Errorf("close journal %s: %w", j.path, err)
	}
	return nil
}

// openJournal creates dir if needed, opens the journal in it, replays it into
// the books of s, which must be empty, and makes s write to it from now on.
func (s *Server) openJournal(dir string, sync bool) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return &ConfigError{Field: "DataDir", Value: dir, Msg: "cannot be created: " + err.Error()}
	}
	path := filepath.Join(dir, journalFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("open payment journal: %w", err) // names the path
	}
	lines, size, err := s.replay(f, path)
	if err != nil {
		_ = f.Close()
		return err
	}
	s.journal = &journal{path: path, f: f, sync: sync, size: size}
	s.logger.Info("payment books replayed", "file", path, "lines", lines,
		"charges", len(s.charges), "pending_voids", len(s.tombstones), "sync", sync)
	return nil
}

// replay reads the journal f at path into the books and returns how many
// lines it replayed and their length in bytes. A torn last line is cut off,
// so that the next line written starts on a line of its own.
func (s *Server) replay(f *os.File, path string) (lines int, size int64, err error) {
	// Every replayed charge is recorded: its waiters, of which there are
	// none, would not wait. One closed channel serves them all.
	done := make(chan struct{})
	close(done)
	r := bufio.NewReaderSize(f, 64<<10)
	for {
		b, err := r.ReadBytes('\n')
		if err == nil {
			lines++
			if err := s.replayLine(b[:len(b)-1], done); err != nil {
				return 0, 0, &JournalError{File: path, Line: lines, Err: err}
			}
			size += int64(len(b))
			continue
		}
		if !errors.Is(err, io.EOF) {
			return 0, 0, fmt.Errorf("read payment journal %s: %w", path, err)
		}
		if len(b) > 0 {
			// Lines are written whole, newline last, before their answer
			// is sent: a last line without its newline was being written
			// when the process died, was never answered, and so was never
			// in the books.
			s.logger.Warn("payment journal: ignoring a torn last line, written when the stand-in died",
				"file", path, "line", lines+1, "bytes", len(b))
			if err := f.Truncate(size); err != nil {
				return 0, 0, fmt.Errorf("cut the torn last line of payment journal %s: %w", path, err)
			}
		}
		return lines, size, nil
	}
}

// replayLine applies one journal line to the books. The entries it creates
// share done, which is closed.
func (s *Server) replayLine(b []byte, done chan struct{}) error {
	var rec record
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rec); err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("decode: more data after the JSON object")
	}
	switch rec.Op {
	case opCharge:
		return s.replayCharge(rec.Charge, done)
	case opVoid:
		switch {
		case rec.Key == "":
			return errors.New("key is required in a void")
		case rec.At.IsZero():
			return errors.New("at is required in a void")
		}
		s.replayVoid(rec.Key, rec.At.UTC())
		return nil
	default:
		return fmt.Errorf("op %q: want %s or %s", rec.Op, opCharge, opVoid)
	}
}

// replayCharge records c as process did, after checking that it is a charge
// process could have written.
func (s *Server) replayCharge(c *Charge, done chan struct{}) error {
	if c == nil {
		return errors.New("charge is required in a charge")
	}
	req := ChargeRequest{Key: c.Key, AmountCents: c.AmountCents, Shopper: c.Shopper, SKU: c.SKU}
	if err := checkChargeRequest(req); err != nil {
		return fmt.Errorf("charge: %w", err)
	}
	switch c.Status {
	case StatusApproved, StatusDeclined:
		if c.VoidedAt != nil {
			return fmt.Errorf("charge.voided_at is set on a charge with status %s", c.Status)
		}
	case StatusVoided:
		if c.VoidedAt == nil {
			return errors.New("charge.voided_at is required with status voided")
		}
	default:
		return fmt.Errorf("charge.status %q: want %s, %s or %s", c.Status, StatusApproved, StatusDeclined, StatusVoided)
	}
	n, ok := parseChargeID(c.ID)
	switch {
	case !ok:
		return fmt.Errorf("charge.id %q: want ch_ and a number", c.ID)
	case n <= s.seq:
		// Lines are written in the order ids are handed out.
		return fmt.Errorf("charge.id %q is not after ch_%08d, the charge before it", c.ID, s.seq)
	}
	if _, dup := s.byKey[c.Key]; dup {
		return fmt.Errorf("charge.key %q was already charged on an earlier line", c.Key)
	}
	s.seq = n
	c.CreatedAt = c.CreatedAt.UTC()
	if c.VoidedAt != nil {
		at := c.VoidedAt.UTC()
		c.VoidedAt = &at
	}
	delete(s.tombstones, c.Key)
	s.byKey[c.Key] = &entry{req: req, done: done, charge: c}
	s.charges = append(s.charges, c)
	return nil
}

// replayVoid voids as handleVoid did: an approved charge becomes voided, a
// key with no charge gets a tombstone, anything else stays as it is.
func (s *Server) replayVoid(key string, at time.Time) {
	if e, ok := s.byKey[key]; ok {
		if e.charge.Status == StatusApproved {
			e.charge.Status = StatusVoided
			e.charge.VoidedAt = &at
		}
		return
	}
	if _, ok := s.tombstones[key]; !ok {
		s.tombstones[key] = at
	}
}

// parseChargeID returns the number in a charge id "ch_<digits>".
func parseChargeID(id string) (uint64, bool) {
	digits, ok := strings.CutPrefix(id, "ch_")
	if !ok || digits == "" || strings.TrimLeft(digits, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseUint(digits, 10, 64)
	return n, err == nil
}
