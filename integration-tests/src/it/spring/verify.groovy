// The consumer's own tests assert the HTTP answer and the trace; this checks that they ran (a Surefire that runs
// none passes).
def expected = [
    'WaitingApplicationTest': ['theEngineIsTheAutoConfiguredOne', 'aRequestIsAnsweredOnceItsPointIsSignalled'],
    'WaitTraceTest'         : ['theTraceOfOneRequestHoldsAGpusyncWaitSpanUnderTheRequestsSpan'],
]
expected.each { testClass, tests ->
    def report = new File(basedir, "target/surefire-reports/TEST-com.example.spring.${testClass}.xml")
    assert report.isFile() : "no Surefire report of ${testClass}: the consumer's tests did not run"
    def suite = new groovy.xml.XmlSlurper().parse(report)
    assert suite.@tests.toInteger() == tests.size() : "${testClass}: expected ${tests.size()} tests, ran ${suite.@tests}"
    assert suite.@failures.toInteger() == 0 && suite.@errors.toInteger() == 0 && suite.@skipped.toInteger() == 0
    def names = suite.testcase.collect { it.@name.toString() } as Set
    assert names == tests as Set
}
return true
