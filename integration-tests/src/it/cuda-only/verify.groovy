// A CUDA-only application gets CUDA's backend and bindings and the engine's needs, nothing of another backend.
def list = new File(basedir, 'target/dependencies.txt')
assert list.isFile() : "no dependency list (maven-dependency-plugin list at validate)"
def lines = list.readLines().collect { it.trim() }.findAll { it.startsWith('io.gpusync:') }
def gpusync = lines.collect { it.split(':')[1] } as Set
println "cuda-only consumer resolves: ${lines.sort()}"
assert gpusync.containsAll(['gpusync-cuda', 'gpusync-bindings-cuda', 'gpusync-reactor-adapter', 'gpusync-api',
        'gpusync-test'])
def others = gpusync.findAll { it =~ /vulkan|gl|opencl|d3d1[12]|metal|wgpu|gpusync-all/ }
assert others.isEmpty() : "a CUDA-only consumer resolved other backends or bindings: ${others}"
// the test kit's fake queues run on CpuTimeline: gpusync-cpu may come with it, in test scope only
def cpu = lines.findAll { it.split(':')[1] == 'gpusync-cpu' }
assert cpu.every { it.split(':')[4].startsWith('test') } : "gpusync-cpu outside test scope: ${cpu}"
def report = new File(basedir, 'target/surefire-reports/TEST-com.example.cudaonly.CudaOnlyConsumerTest.xml')
assert report.isFile() : "no Surefire report: the consumer's tests did not run"
def suite = new groovy.xml.XmlSlurper().parse(report)
assert suite.@tests.toInteger() == 2 && suite.@failures.toInteger() == 0 && suite.@errors.toInteger() == 0
return true
