// The consumer's own tests assert the HTTP answers; this checks that they ran (a Surefire that runs none passes).
def report = new File(basedir, 'target/surefire-reports/TEST-com.example.mvc.BlockingApplicationTest.xml')
assert report.isFile() : "no Surefire report: the consumer's tests did not run"
def suite = new groovy.xml.XmlSlurper().parse(report)
assert suite.@tests.toInteger() == 2 : "expected 2 tests, ran ${suite.@tests}"
assert suite.@failures.toInteger() == 0 && suite.@errors.toInteger() == 0 && suite.@skipped.toInteger() == 0
def names = suite.testcase.collect { it.@name.toString() } as Set
assert names == ['concurrentRequestsBlockOnTheirPointsOnVirtualThreads', 'aPointNeverSignalledTimesOutWithSyncTimeoutException'] as Set
return true
