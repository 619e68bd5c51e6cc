package fleet

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// The run's token never crosses the wire. A worker and its coordinator
// prove to each other that they know it, over nonces each chose, and every
// instruction the coordinator gives (the job, the clock, the start, stop)
// is signed under a key only the two of them can derive:
//
//	worker → GET /v1/hello?nonce=NW             (16 random bytes, hex)
//	coordinator → {"nonce": NC, "proof": HMAC(token, "coordinator", NW, NC)}
//	  with NC = HMAC(secret, "nonce", NW)[:16], secret the coordinator's
//	  own, made when it starts and never sent
//	worker checks the proof, else stops: whoever answered does not know the
//	token, and is sent nothing more;
//	worker → every later request: Authorization: Gameday-Shard worker=NW, nonce=NC, proof=HMAC(token, "worker", NW, NC)
//	coordinator → every answer it gives to one: X-Gameday-Signature: HMAC(key, METHOD, URI, body)
//	with key = HMAC(token, "session", NW, NC)
//
// A coordinator spoofed at the worker's URL learns nothing of the token (a
// proof is over nonces, under labels the other side never signs) and
// cannot sign a job: the worker sends no request to its system under test
// and no record back. The coordinator keeps no session: it knows its own
// nonces again from the worker's (so a stranger's hellos, however many,
// take nothing from the workers, and a proof made for another coordinator,
// an earlier drill's under the same token, is refused). Nothing is
// encrypted: on a network where others listen, the records and the job
// (the purchase flow's values) can be read; run the protocol over a
// private network or a TLS-terminating proxy.
const (
	labelCoordinator = "gameday-shard/2 coordinator"
	labelWorker      = "gameday-shard/2 worker"
	labelSession     = "gameday-shard/2 session"
	// authScheme names the Authorization header's scheme.
	authScheme = "Gameday-Shard"
	// signatureHeader carries the coordinator's signature of an answer.
	signatureHeader = "X-Gameday-Signature"
	nonceBytes      = 16
)

// mac is HMAC-SHA256 under the token over a label and the parts, each
// prefixed with its length so that no two inputs read the same.
func mac(key []byte, label string, parts ...[]byte) []byte {
	h := hmac.New(sha256.New, key)
	for _, p := range append([][]byte{[]byte(label)}, parts...) {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write(p)
	}
	return h.Sum(nil)
}

// hello is the coordinator's answer to a worker's nonce.
type hello struct {
	Nonce string `json:"nonce"`
	Proof string `json:"proof"`
}

// session is one worker's proven link to the coordinator.
type session struct {
	nw, nc []byte
	key    []byte // signs the coordinator's answers
	worker []byte // the proof the worker must carry
}

func newSession(token string, nw, nc []byte) *session {
	t := []byte(token)
	return &session{nw: nw, nc: nc, key: mac(t, labelSession, nw, nc), worker: mac(t, labelWorker, nw, nc)}
}

// header is the Authorization header of the worker's requests.
func (s *session) header() string {
	return fmt.Sprintf("%s worker=%s, nonce=%s, proof=%s", authScheme, hex.EncodeToString(s.nw), hex.EncodeToString(s.nc), hex.EncodeToString(s.worker))
}

// sign is the signature of an answer to method uri.
func (s *session) sign(method, uri string, body []byte) string {
	return hex.EncodeToString(mac(s.key, "answer", []byte(method), []byte(uri), body))
}

func newNonce() ([]byte, error) {
	b := make([]byte, nonceBytes)
	_, err := rand.Read(b)
	return b, err
}

func readNonce(s string) ([]byte, error) {
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != nonceBytes {
		return nil, fmt.Errorf("want %d bytes in hex", nonceBytes)
	}
	return b, nil
}

// nonceFor is the coordinator's nonce for a worker's: its own secret's
// MAC of it, so that it knows its nonces again without keeping them.
func nonceFor(secret, nw []byte) []byte {
	return mac(secret, "nonce", nw)[:nonceBytes]
}

// parseAuth reads an Authorization header of the protocol: the worker's
// nonce, the coordinator's and the worker's proof.
func parseAuth(h string) (nw, nc, proof []byte, err error) {
	rest, ok := strings.CutPrefix(h, authScheme+" ")
	if !ok {
		return nil, nil, nil, errors.New("no " + authScheme + " authorization")
	}
	for _, kv := range strings.Split(rest, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(kv), "=")
		switch k {
		case "worker":
			nw, err = readNonce(v)
		case "nonce":
			nc, err = readNonce(v)
		case "proof":
			proof, err = hex.DecodeString(v)
		}
		if err != nil {
			return nil, nil, nil, err
		}
	}
	if nw == nil || nc == nil || proof == nil {
		return nil, nil, nil, errors.New("want worker=, nonce= and proof=")
	}
	return nw, nc, proof, nil
}

// verify checks the coordinator's proof of the token: it is the one that
// answers the worker's nonce.
func verifyHello(token string, nw []byte, h hello) (*session, error) {
	nc, err := readNonce(h.Nonce)
	if err != nil {
		return nil, fmt.Errorf("its nonce: %v", err)
	}
	proof, err := hex.DecodeString(h.Proof)
	if err != nil || !hmac.Equal(proof, mac([]byte(token), labelCoordinator, nw, nc)) {
		return nil, errors.New("it does not prove it knows this run's token")
	}
	return newSession(token, nw, nc), nil
}

// sessionKey is the context key of the session a request was proven by.
type sessionKey struct{}

func sessionOf(ctx context.Context) *session {
	s, _ := ctx.Value(sessionKey{}).(*session)
	return s
}

// equal compares proofs in constant time.
func equal(a, b []byte) bool { return subtle.ConstantTimeCompare(a, b) == 1 }
