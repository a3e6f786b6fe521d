package v1alpha1

// Exported for the property tests of package v1alpha1_test, which also
// run against a real API server with the product's webhooks (envtest) and
// so import operator/appupgrade/webhook, which imports this package.
var (
	Pair          = pair
	SpecToHub     = specToHub
	DescribeGraph = describeGraph
)

// ConversionData is the content of ConversionDataAnnotation.
type ConversionData = conversionData
