// Each run's exit status already failed the build unless its eventfd wait took the expected path on the module
// path; this checks what the runs printed.
def log = { name -> def f = new File(basedir, "target/${name}.log"); assert f.isFile() : "run ${name} did not start"; f.text }

def withNetty = log('with-netty-line')
assert withNetty.contains('module path: true; eventfd wait completed on path EPOLL') : withNetty
assert !withNetty.contains('Unknown module') && !withNetty.contains('restricted method')
assert !withNetty.contains('not resolved') : "README's Netty line must need no more flags:\n" + withNetty

def withoutAddModules = log('without-add-modules')
assert withoutAddModules.contains('eventfd wait completed on path BLOCKING') : withoutAddModules
def hint = '--add-modules io.netty.transport.classes.epoll,io.netty.transport.epoll.linux.x86_64'
assert withoutAddModules.contains(hint) : "gpusync did not say what to add:\n" + withoutAddModules
assert withoutAddModules.count("Netty's epoll transport is on the module path but not resolved") == 1 : withoutAddModules

def noNetty = log('no-netty')
assert noNetty.contains('module path: true; eventfd wait completed on path BLOCKING') : noNetty
assert !noNetty.contains('Unknown module') : "README's line without Netty names a missing module:\n" + noNetty
assert !noNetty.contains('restricted method') && !noNetty.contains('not resolved') : noNetty
return true
