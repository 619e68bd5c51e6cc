package system

import (
	_ "embed"
	"fmt"
)

//go:embed reference.yaml
var referenceYAML []byte

// ReferenceFile is the name the reference system's errors carry.
const ReferenceFile = "reference-checkout (gameday/system/reference.yaml)"

// Reference is the reference checkout described as a system, with the
// addresses an environment chose: CHECKOUT_URL, BASE_URL (where purchases
// go; default CHECKOUT_URL: a router in front of pods), PAYMENT_URL (empty: its
// charges are not read), CATALOG_URL (the catalogue stand-in's; empty: the
// environment has none, nor the dependency catalog), TOXIPROXY, and SETTLE_WITHIN (how long its books
// may take to settle: its lease, the payment timeouts and some). Variables
// not given come from the process environment.
func Reference(vars map[string]string) (*System, error) {
	v := map[string]string{}
	for k, x := range vars {
		v[k] = x
	}
	if v["BASE_URL"] == "" && v["CHECKOUT_URL"] != "" {
		v["BASE_URL"] = v["CHECKOUT_URL"]
	}
	noPay := v["PAYMENT_URL"] == ""
	if noPay {
		v["PAYMENT_URL"] = "http://payment-url.invalid" // never asked: its charges are dropped below
	}
	noCatalog := v["CATALOG_URL"] == ""
	if noCatalog {
		v["CATALOG_URL"] = "http://catalog-url.invalid" // never asked: dropped below
	}
	s, err := Parse(ReferenceFile, referenceYAML, v)
	if err != nil {
		return nil, fmt.Errorf("the reference system: %w", err)
	}
	if noPay {
		s.Books.Charges = nil
		delete(s.Stores, "provider")
	}
	if noCatalog {
		// An environment without the catalogue stand-in: no such
		// dependency, and nothing of it to count.
		delete(s.Dependencies, "catalog")
		delete(s.Stores, "catalog")
		delete(s.Counters, "origin_requests")
	}
	return s, nil
}

// ReferenceYAML is the reference system's file, for reading.
func ReferenceYAML() []byte { return append([]byte(nil), referenceYAML...) }

//go:embed starter.yaml
var starterYAML []byte

// Starter is a commented starter system file, as "gameday init --system"
// writes it: valid as it stands, every section to be edited.
func Starter() []byte { return append([]byte(nil), starterYAML...) }
