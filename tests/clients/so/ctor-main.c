/*
 * ctor-main.c - the program of t117: linked with libctor-lib.so, whose
 * constructor and destructor allocate and free (ctor-lib.c).
 */
void ctor_phase(void);

int main(void)
{
	ctor_phase();
	return 0;
}
