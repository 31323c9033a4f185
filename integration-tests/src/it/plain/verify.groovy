// The consumer's own tests assert the waits; this checks that they ran (a Surefire that runs none passes).
def report = new File(basedir, 'target/surefire-reports/TEST-com.example.plain.PlainConsumerTest.xml')
assert report.isFile() : "no Surefire report: the consumer's tests did not run"
def suite = new groovy.xml.XmlSlurper().parse(report)
assert suite.@tests.toInteger() == 3 : "expected 3 tests, ran ${suite.@tests}"
assert suite.@failures.toInteger() == 0 && suite.@errors.toInteger() == 0 && suite.@skipped.toInteger() == 0
def names = suite.testcase.collect { it.@name.toString() } as Set
assert names == ['nettyIsNotOnTheClassPath', 'aCpuTimelineWaitCompletesOnceTheTimelineReachesItsValue',
                 'aVulkanTimelineWaitOnLavapipeCompletesWhenTheQueueSignals'] as Set
return true
