package judge

// Outcome is how a shopper's checkout ended, in the load generator's words
// (package load's Outcome… constants; a test in package gameday holds the
// two vocabularies equal); "" for a shopper never started.
type Outcome string

// The outcomes judging reasons about.
const (
	Confirmed   Outcome = "confirmed"   // the shopper bought
	OK          Outcome = "ok"          // a visit of a journey that does not buy went through
	Declined    Outcome = "declined"    // the payment was declined
	SoldOut     Outcome = "sold_out"    // nothing left
	TooLate     Outcome = "too_late"    // the system saw the shopper's deadline pass
	GaveUp      Outcome = "gave_up"     // the shopper left, its deadline passed
	Unavailable Outcome = "unavailable" // told to come back, with no retry left
	Error       Outcome = "error"       // an error, or an answer not understood
	Dropped     Outcome = "dropped"     // the load generator could not start it
)
