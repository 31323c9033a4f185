// The application's exit status already failed the build unless the wait took EPOLL; this checks what it printed.
def log = new File(basedir, 'target/app.log')
assert log.isFile() : "the fat jar was not started"
def text = log.text
assert text.contains('eventfd wait completed on path EPOLL') : "no EPOLL wait in the application's output:\n" + text
assert !text.contains('restricted method') : "the JDK warned about native access:\n" + text
assert !text.contains('SyncNotSupportedException') : text
assert !text.contains('Exception') && !text.contains(' ERROR ') : "the application logged an error:\n" + text
return true
