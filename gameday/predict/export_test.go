package predict

// PeakModel is peakModel for the external tests and benchmarks.
var PeakModel = peakModel

// PredictWith is predictWith, for the test that the number of workers
// changes nothing.
var PredictWith = predictWith
