package simrun

// For the external tests of this package (mutants_test.go), which use
// scenarios/faults/mutants — a package that imports simrun itself.
var (
	DemoObjects      = demoObjects
	GraphDemoObjects = graphDemoObjects
	SidecarObjects   = sidecarObjects
)
