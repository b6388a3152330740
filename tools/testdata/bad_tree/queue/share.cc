#include <thread>  // threads in the pure core: forbidden
