// A CUDA-only application gets CUDA's backend and bindings and the engine's needs, nothing of another backend.
def list = new File(basedir, 'target/dependencies.txt')
assert list.isFile() : "no dependency list (maven-dependency-plugin list at validate)"
def gpusync = list.readLines().collect { it.trim() }.findAll { it.startsWith('io.gpusync:') }
        .collect { it.split(':')[1] } as Set
println "cuda-only consumer resolves: ${gpusync.sort()}"
assert gpusync.containsAll(['gpusync-cuda', 'gpusync-bindings-cuda', 'gpusync-reactor-adapter', 'gpusync-api'])
def others = gpusync.findAll { it =~ /vulkan|gl|opencl|d3d1[12]|metal|wgpu|gpusync-cpu|gpusync-all/ }
assert others.isEmpty() : "a CUDA-only consumer resolved other backends or bindings: ${others}"
def report = new File(basedir, 'target/surefire-reports/TEST-com.example.cudaonly.CudaOnlyConsumerTest.xml')
assert report.isFile() : "no Surefire report: the consumer's tests did not run"
def suite = new groovy.xml.XmlSlurper().parse(report)
assert suite.@tests.toInteger() == 1 && suite.@failures.toInteger() == 0 && suite.@errors.toInteger() == 0
return true
