// The three GLX entry points OpenCV's core archive names, for its OpenGL interop (cv::ogl), which
// sv never uses. Linking libGLX for them would load it and eight X11 libraries at every start
// (2.7 ms a process on a 2-core virtual machine). These answer as GLX does without a display or
// a current context, so a cv::ogl call would fail with OpenCV's own "no OpenGL context" error.
extern "C" {
void* glXGetCurrentContext() { return nullptr; }
void* glXGetCurrentDisplay() { return nullptr; }
void (*glXGetProcAddressARB(const unsigned char*))() { return nullptr; }
}
