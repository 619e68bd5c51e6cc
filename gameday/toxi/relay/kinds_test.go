package relay

import (
	"encoding/binary"
	"strings"
	"testing"
)

func pgQuery(q string) []byte {
	b := []byte{'Q', 0, 0, 0, 0}
	b = append(b, q...)
	b = append(b, 0)
	binary.BigEndian.PutUint32(b[1:], uint32(len(b)-1))
	return b
}

func mysqlQuery(q string) []byte {
	n := len(q) + 1
	return append([]byte{byte(n), byte(n >> 8), byte(n >> 16), 0, 0x03}, q...)
}

// Kind names a request by its protocol's first words, whatever the
// protocol, and never mistakes one protocol's bytes for another's.
func TestKind(t *testing.T) {
	for req, want := range map[string]string{
		string(pgQuery("begin")): "BEGIN",
		string(pgQuery("START TRANSACTION ISOLATION LEVEL SERIALIZABLE")): "BEGIN",
		string(pgQuery("-- take one\nUPDATE public.products SET n=n-1")):  "UPDATE public.products",
		string(pgQuery(`insert into "Orders"(id) values ($1)`)):           "INSERT INTO orders",
		string(pgQuery("SELECT count(*) FROM (SELECT 1 FROM x) s")):       "SELECT",
		string(pgQuery("select a from holds h join x on true")):           "SELECT FROM holds",
		string(pgQuery("end")):                               "COMMIT",
		string(pgQuery("abort")):                             "ROLLBACK",
		string(mysqlQuery("DELETE FROM `holds` WHERE id=1")): "DELETE FROM holds",
		string(mysqlQuery("COMMIT")):                         "COMMIT",
		"*3\r\n$4\r\nEVAL\r\n$8\r\nreturn 1\r\n$1\r\n0\r\n":  "EVAL e0e1f9fa",
		"*3\r\n$7\r\nevalsha\r\n$40\r\ne0e1f9fabfc9d4800c877a703b823ac0578ff8db\r\n$1\r\n0\r\n": "EVALSHA e0e1f9fa",
		"*2\r\n$3\r\nget\r\n$1\r\nk\r\n": "GET",
		"PING\r\n":                       "PING",
		"POST /v1/charges HTTP/1.1\r\nHost: x\r\n\r\n":       "POST /v1/charges",
		"GET /products/A-100/stock?fresh=1 HTTP/1.1\r\n\r\n": "GET /products/{id}/stock",
		"DELETE /carts/9f86d081884c7d65 HTTP/1.1\r\n\r\n":    "DELETE /carts/{id}",
		"\x00\x00\x00\x08\x04\xd2\x16\x2f":                   "connect",
		"":                                                   "other",
		"\x01\x02garbage":                                    "other",
	} {
		if got := Kind([]byte(req)); got != want {
			t.Errorf("Kind(%q) = %q, want %q", req, got, want)
		}
	}
}

func pgMsg(typ byte, parts ...string) []byte {
	body := []byte{}
	for _, p := range parts {
		body = append(append(body, p...), 0)
	}
	b := []byte{typ, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(b[1:], uint32(len(body)+4))
	return append(b, body...)
}

// A statement pgx prepares in a round trip of its own is named PREPARE
// there, and its kind where it is run by name (Bind, Execute); one
// parsed and run at once is its kind; one run by a name the relay never
// saw prepared is EXECUTE.
func TestKindOfPreparedStatements(t *testing.T) {
	var st statements
	steps := []struct {
		req  []byte
		want string
	}{
		{append(append(pgMsg('P', "stmt_1", "UPDATE products SET n = n - 1 WHERE sku = $1", ""), pgMsg('D', "Sstmt_1")...), pgMsg('S')...), "PREPARE UPDATE products"},
		{append(append(pgMsg('B', "", "stmt_1", ""), pgMsg('E', "", "")...), pgMsg('S')...), "UPDATE products"},
		{append(append(pgMsg('P', "", "commit"), pgMsg('B', "", "", "")...), pgMsg('E', "", "")...), "COMMIT"},
		{append(pgMsg('B', "", "stmt_9", ""), pgMsg('E', "", "")...), "EXECUTE"},
		{pgQuery("begin"), "BEGIN"},
		// A MySQL query of 0x150 bytes begins with 'P': it is still MySQL's.
		{mysqlQuery("UPDATE holds SET n = 1" + strings.Repeat(" ", 0x150-1-len("UPDATE holds SET n = 1"))), "UPDATE holds"},
	}
	for i, s := range steps {
		if got := st.kind(s.req); got != s.want {
			t.Errorf("request %d: %q, want %q", i, got, s.want)
		}
	}
}

func TestSameKind(t *testing.T) {
	for _, c := range []struct {
		want, got string
		same      bool
	}{
		{"commit", "COMMIT", true},
		{"EVALSHA ca159073", "EVAL ca159073", true},
		{"EVAL ca159073", "EVALSHA CA159073", true},
		{"EVALSHA ca159073", "EVALSHA ee854c39", false},
		{"EVALSHA_RO ca159073", "EVALSHA ca159073", false},
		{"UPDATE products", "PREPARE UPDATE products", false},
	} {
		if got := SameKind(c.want, c.got); got != c.same {
			t.Errorf("SameKind(%q, %q) = %v", c.want, c.got, got)
		}
	}
}
